// The whole life of runs on both databases, against a real webhook agent on 127.0.0.1: start, auto-advance,
// decisions (approve, revise with feedback, reject), people's work, asynchronous answers with the task token,
// cancel with a late answer, and the list with its status filter.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { randomBytes } from 'node:crypto'
import { Vault, VaultError } from '../../src/credentials/vault.js'
import { taskToken } from '../../src/runs/machine/machine.js'
import { build, dialects, send } from '../helpers.js'
import { startAgentServer, waitFor, type AgentServer, type Delivery } from './agent-server.js'
import { NIL, createAgent, createCycle, createStream, getRun, runIn, startRun } from './setup.js'
import { bearer } from '../auth.js'
import { contentOfText } from '../../src/chat/richtext.js'

for (const dialect of dialects()) {
  describe(`run lifecycle (${dialect})`, () => {
    let app: FastifyInstance
    let agent: AgentServer
    let agentId: string
    let streamId: string

    before(async () => {
      app = await build(dialect, { TANDEM_WORKERS: '4', TANDEM_PUBLIC_URL: 'http://tandem.test', TANDEM_EGRESS_ALLOW: '127.0.0.0/8' }, { ownDatabase: true })
      agent = await startAgentServer()
      agentId = await createAgent(app, { endpointUrl: agent.url })
      streamId = await createStream(app)
    })
    after(async () => {
      await app.close()
      await agent.close()
    })

    it("a task lists its stream's latest 20 messages, oldest first, as the chat API shows them", async () => {
      // PostgreSQL reads them in the delivery's context statement, SQLite on their own (src/runs/store.ts): the same list.
      const busy = await createStream(app, 'Busy')
      for (let i = 0; i < 25; i++) assert.equal((await send(app, 'POST', `/api/chat/streams/${busy}/messages`, { content: contentOfText(`message ${i}`) })).statusCode, 201)
      const listed = (await send(app, 'GET', `/api/chat/streams/${busy}/messages?limit=100`)).json().data as Array<Record<string, unknown>>
      assert.equal(listed.length, 25)
      const cycleId = await createCycle(app, busy, [{ agentId, autoAdvance: true, name: 'Read' }])
      const started = await startRun(app, busy, cycleId)
      const delivery = await waitFor(() => agent.deliveries.find((d) => d.body.run.id === started.id), 10000, 'the delivery')
      const latest = listed.slice(-20).map((m) => ({ id: m.id, authorId: m.authorId, authorType: m.authorType, text: m.text, createdAt: m.createdAt }))
      assert.deepEqual(delivery.body.messages, latest)
      await runIn(app, started.id, 'succeeded')
    })

    it('runs phases in order, posts outputs as agent messages, waits for decisions, revises with feedback and succeeds', async () => {
      const cycleId = await createCycle(app, streamId, [{ agentId, autoAdvance: true, name: 'Triage' }, { agentId, autoAdvance: false, name: 'Reply' }])
      const started = await startRun(app, streamId, cycleId)
      // The first phase begins in the request that starts the run.
      assert.equal(started.status, 'running')
      assert.deepEqual(started.input, { ticket: 42 })
      assert.equal(started.phases.length, 2)
      assert.deepEqual(started.phases.map((p: any) => [p.status, p.attempts, p.output]), [['running', 1, null], ['pending', 0, null]])

      const waiting = await runIn(app, started.id, 'waiting')
      const [triage, reply] = waiting.phases
      assert.equal(triage.status, 'succeeded')
      assert.equal(triage.output.text, 'done: Triage #1')
      assert.equal(reply.status, 'awaiting_decision')
      assert.equal(reply.attempts, 1)
      assert.ok(waiting.startedAt)
      const message = (await send(app, 'GET', `/api/chat/messages/${triage.output.messageId}`)).json()
      assert.equal(message.authorType, 'agent')
      assert.equal(message.authorId, agentId)
      assert.equal(message.text, 'done: Triage #1')

      const mine = agent.deliveries.filter((d) => d.body.run.id === started.id)
      assert.equal(mine.length, 2)
      const second = mine[1]!
      assert.equal(second.headers['webhook-id'], second.body.task.id)
      assert.match(String(second.headers['webhook-timestamp']), /^\d+$/)
      assert.equal(second.headers['webhook-signature'], undefined, 'no credential: no signature')
      assert.equal(second.headers['content-type'], 'application/json')
      assert.deepEqual(second.body.previous, [{ phaseName: 'Triage', text: 'done: Triage #1' }])
      assert.equal(second.body.phase.feedback, null)
      assert.equal(second.body.result.url, `http://tandem.test/api/tasks/${second.body.task.id}/result`)
      assert.match(second.body.result.token, /^tdt_/)
      assert.equal(second.body.cycle.triggerName, 'new-ticket')
      assert.equal(second.body.cycle.description, 'Handle a ticket')
      assert.equal(second.body.stream.name, 'Support')
      assert.deepEqual(second.body.run.input, { ticket: 42 })
      assert.ok(second.body.messages.some((m: any) => m.id === triage.output.messageId && m.authorType === 'agent'))

      const missingNote = await send(app, 'POST', `/api/runs/${started.id}/phases/${reply.id}/decision`, { decision: 'revise' })
      assert.equal(missingNote.statusCode, 422)
      assert.equal(missingNote.json().type, 'urn:tandem:problem:unprocessable')
      const revise = await send(app, 'POST', `/api/runs/${started.id}/phases/${reply.id}/decision`, { decision: 'revise', note: 'be kinder' })
      assert.equal(revise.statusCode, 200, revise.body)
      assert.equal(revise.json().phases[1].status, 'running')
      assert.equal(revise.json().phases[1].attempts, 2)
      const again = await runIn(app, started.id, 'waiting')
      assert.equal(again.phases[1].output.text, 'done: Reply #2')
      const third = agent.deliveries.filter((d) => d.body.run.id === started.id)[2]!
      assert.equal(third.body.phase.feedback, 'be kinder')
      assert.equal(third.body.task.attempt, 2)

      const approve = await send(app, 'POST', `/api/runs/${started.id}/phases/${reply.id}/decision`, { decision: 'approve' })
      assert.equal(approve.statusCode, 200)
      const done = approve.json()
      assert.equal(done.status, 'succeeded')
      assert.ok(done.finishedAt)
      assert.equal(done.error, null)
      assert.deepEqual(done.phases[1].decisions.map((d: any) => d.decision), ['revise', 'approve'])
      assert.equal(done.phases[1].decisions[0].note, 'be kinder')
      assert.equal(done.phases[1].decisions[0].principalId, '00000000-0000-7000-8000-000000000001')

      const late = await send(app, 'POST', `/api/runs/${started.id}/phases/${reply.id}/decision`, { decision: 'approve' })
      assert.equal(late.statusCode, 409)
      assert.equal(late.json().type, 'urn:tandem:problem:not-awaiting-decision')
      assert.match(late.json().detail, /^Phase "[^"]+" has succeeded: it takes no decision\.$/, 'the status in words, not "is succeeded"')
    })

    it('rejects: the phase fails and the run ends rejected', async () => {
      const cycleId = await createCycle(app, streamId, [{ agentId, autoAdvance: false }, { agentId }])
      const run = await startRun(app, streamId, cycleId)
      const waiting = await runIn(app, run.id, 'waiting')
      const res = await send(app, 'POST', `/api/runs/${run.id}/phases/${waiting.phases[0].id}/decision`, { decision: 'reject', note: 'wrong' })
      assert.equal(res.statusCode, 200)
      const rejected = res.json()
      assert.equal(rejected.status, 'rejected')
      assert.equal(rejected.phases[0].status, 'failed')
      assert.equal(rejected.phases[1].status, 'pending')
      assert.equal(rejected.error.type, 'urn:tandem:problem:phase-rejected')
      assert.match(rejected.error.detail, /wrong/)
    })

    it('people\'s work (nil agent): awaits a decision with no output; revise is a 422; approve with a note posts it', async () => {
      const cycleId = await createCycle(app, streamId, [{ agentId: NIL, autoAdvance: true }])
      const run = await startRun(app, streamId, cycleId)
      const waiting = await runIn(app, run.id, 'waiting')
      const phase = waiting.phases[0]
      assert.equal(phase.status, 'awaiting_decision')
      assert.equal(phase.output, null)
      assert.equal(phase.attempts, 0)
      const revise = await send(app, 'POST', `/api/runs/${run.id}/phases/${phase.id}/decision`, { decision: 'revise', note: 'x' })
      assert.equal(revise.statusCode, 422)
      const approve = await send(app, 'POST', `/api/runs/${run.id}/phases/${phase.id}/decision`, { decision: 'approve', note: 'Called the customer.' })
      assert.equal(approve.statusCode, 200)
      const done = approve.json()
      assert.equal(done.status, 'succeeded')
      assert.equal(done.phases[0].output.text, 'Called the customer.')
      const message = (await send(app, 'GET', `/api/chat/messages/${done.phases[0].output.messageId}`)).json()
      assert.equal(message.authorType, 'principal')
      assert.equal(message.authorId, '00000000-0000-7000-8000-000000000001')
    })

    it('takes an asynchronous answer at result.url with the task token; other tokens are 401, a second answer 409', async () => {
      const slow = await startAgentServer(() => ({ status: 202 }))
      try {
        const slowId = await createAgent(app, { endpointUrl: slow.url })
        const cycleId = await createCycle(app, streamId, [{ agentId: slowId }])
        const run = await startRun(app, streamId, cycleId)
        const delivery = await waitFor(() => slow.deliveries.find((d) => d.body.run.id === run.id), 10000, 'delivery')
        const { id: taskId } = delivery.body.task
        const { token } = delivery.body.result
        assert.equal((await getRun(app, run.id)).status, 'running')
        const url = `/api/tasks/${taskId}/result`
        const body = { output: { content: { blocks: [{ type: 'rich_text', elements: [{ type: 'paragraph', children: [{ type: 'text', text: 'rich answer' }] }] }] } } }
        assert.equal((await send(app, 'POST', url, body)).statusCode, 401)
        assert.equal((await send(app, 'POST', url, body, { authorization: 'Bearer tdt_garbage' })).statusCode, 401)
        const bad = await send(app, 'POST', url, { output: { text: 'a', content: body.output.content } }, bearer(token))
        assert.equal(bad.statusCode, 400)
        const neither = await send(app, 'POST', url, { output: {}, extra: 1 }, bearer(token))
        assert.equal(neither.statusCode, 400)
        assert.deepEqual(neither.json().errors.map((e: any) => e.pointer), ['/extra'])
        const ok = await send(app, 'POST', url, body, bearer(token))
        assert.equal(ok.statusCode, 200, ok.body)
        assert.deepEqual(ok.json(), { accepted: true })
        const done = await getRun(app, run.id)
        assert.equal(done.status, 'succeeded')
        assert.equal(done.phases[0].output.text, 'rich answer')
        const twice = await send(app, 'POST', url, body, bearer(token))
        assert.equal(twice.statusCode, 409)
        assert.equal(twice.json().type, 'urn:tandem:problem:task-closed')
      } finally {
        await slow.close()
      }
    })

    it('keeps a push task\'s token out of its delivery job, which names only the vault key it is derived with; a retry carries the same token, which answers', async () => {
      let release = () => {}
      const released = new Promise<void>((resolve) => (release = resolve))
      let count = 0
      const flaky = await startAgentServer(async () => {
        if (++count === 1) return { status: 503 }
        await released // the retry's job is running meanwhile: its row is read
        return { status: 202 }
      })
      try {
        const flakyId = await createAgent(app, { endpointUrl: flaky.url })
        const cycleId = await createCycle(app, streamId, [{ agentId: flakyId }])
        const run = await startRun(app, streamId, cycleId)
        const [first, second] = (await waitFor(() => (flaky.deliveries.length >= 2 ? flaky.deliveries : undefined), 15000, 'a retried delivery')) as [Delivery, Delivery]
        const { id: taskId } = first.body.task
        const { token } = first.body.result
        assert.match(token, /^tdt_/)
        assert.equal(second.body.result.token, token, 'the retry carries the same token')

        const payloads = dialect === 'postgres'
          ? (await sql<{ payload: string }>`select payload::text as payload from graphile_worker._private_jobs`.execute(app.database.db)).rows.map((r) => r.payload)
          : (await app.database.db.selectFrom('jobs').select('payload').execute()).map((r) => r.payload)
        const jobs = payloads.map((p) => JSON.parse(p)).filter((p) => p.taskId === taskId)
        assert.ok(jobs.some((job) => job.token?.derivedWith === app.vault.keyId), JSON.stringify(jobs))
        assert.ok(payloads.every((p) => !p.includes(token) && !p.includes(token.slice(4))), 'no job row holds the token')
        const task = await app.database.db.selectFrom('run_tasks').selectAll().where('id', '=', taskId).executeTakeFirstOrThrow()
        assert.ok(!JSON.stringify(task).includes(token.slice(4)), 'the task row holds only its hash')

        release()
        const ok = await send(app, 'POST', `/api/tasks/${taskId}/result`, { output: { text: 'answered later' } }, bearer(token))
        assert.equal(ok.statusCode, 200, ok.body)
        assert.equal((await runIn(app, run.id, 'succeeded')).phases[0].output.text, 'answered later')
      } finally {
        release()
        await flaky.close()
      }
    })

    it('an error answer fails the phase and the run with agent-failed quoting it', async () => {
      const failing = await startAgentServer(() => ({ status: 200, body: { error: { detail: 'model overloaded' } } }))
      try {
        const id = await createAgent(app, { endpointUrl: failing.url })
        const run = await startRun(app, streamId, await createCycle(app, streamId, [{ agentId: id }, { agentId: id }]))
        const failed = await runIn(app, run.id, 'failed')
        assert.equal(failed.error.type, 'urn:tandem:problem:agent-failed')
        assert.match(failed.error.detail, /model overloaded/)
        assert.deepEqual(failed.phases[0].error, failed.error)
        assert.equal(failed.phases[1].status, 'pending')
      } finally {
        await failing.close()
      }
    })

    it('cancel ends the run and its phases; a late answer is a 409 task-closed; a second cancel 409 run-finished', async () => {
      const slow = await startAgentServer(() => ({ status: 202 }))
      try {
        const slowId = await createAgent(app, { endpointUrl: slow.url })
        const run = await startRun(app, streamId, await createCycle(app, streamId, [{ agentId: slowId }, { agentId: slowId }]))
        const delivery = await waitFor(() => slow.deliveries.find((d) => d.body.run.id === run.id), 10000, 'delivery')
        const cancel = await send(app, 'POST', `/api/runs/${run.id}/cancel`)
        assert.equal(cancel.statusCode, 200)
        assert.equal(cancel.json().status, 'canceled')
        assert.deepEqual(cancel.json().phases.map((p: any) => p.status), ['canceled', 'canceled'])
        const late = await send(app, 'POST', `/api/tasks/${delivery.body.task.id}/result`, { output: { text: 'late' } }, bearer(delivery.body.result.token))
        assert.equal(late.statusCode, 409)
        assert.equal(late.json().type, 'urn:tandem:problem:task-closed')
        const again = await send(app, 'POST', `/api/runs/${run.id}/cancel`)
        assert.equal(again.statusCode, 409)
        assert.equal(again.json().type, 'urn:tandem:problem:run-finished')
        assert.equal((await getRun(app, run.id)).status, 'canceled')
      } finally {
        await slow.close()
      }
    })

    it('lists runs oldest first, filtered by status, in pages', async () => {
      const own = await createStream(app, 'Listing')
      const cycleId = await createCycle(app, own, [{ agentId: NIL }])
      const runs = [await startRun(app, own, cycleId), await startRun(app, own, cycleId), await startRun(app, own, cycleId)]
      await Promise.all(runs.map((r) => runIn(app, r.id, 'waiting')))
      assert.equal((await send(app, 'POST', `/api/runs/${runs[1].id}/cancel`)).statusCode, 200)
      const all = (await send(app, 'GET', `/api/cycles/streams/${own}/runs`)).json()
      assert.deepEqual(all.data.map((r: any) => r.id), runs.map((r) => r.id))
      const canceled = (await send(app, 'GET', `/api/cycles/streams/${own}/runs?status=canceled`)).json()
      assert.deepEqual(canceled.data.map((r: any) => r.id), [runs[1].id])
      const first = (await send(app, 'GET', `/api/cycles/streams/${own}/runs?limit=2`)).json()
      assert.equal(first.data.length, 2)
      const rest = (await send(app, 'GET', `/api/cycles/streams/${own}/runs?limit=2&cursor=${first.nextCursor}`)).json()
      assert.deepEqual(rest.data.map((r: any) => r.id), [runs[2].id])
      assert.equal(rest.nextCursor, null)
    })
  })
}

describe('a delivery job\'s token', () => {
  it('is derived from its task under a vault key: the same at every delivery, its own per task, and made again after a rotation with the previous key', () => {
    const oldKey = randomBytes(32)
    const vault = new Vault(oldKey)
    const job = { taskId: 't1', token: { derivedWith: vault.keyId }, dispatch: 1 }
    const token = taskToken(vault, job)
    assert.match(token, /^tdt_[A-Za-z0-9_-]{43}$/)
    assert.equal(taskToken(vault, job), token)
    assert.equal(vault.taskToken('t1'), token)
    assert.notEqual(taskToken(vault, { ...job, taskId: 't2' }), token)
    // Another key makes other tokens; after a rotation the previous key still makes this task's token.
    const rotated = new Vault(randomBytes(32), [oldKey])
    assert.notEqual(rotated.taskToken('t1'), token)
    assert.equal(taskToken(rotated, job), token)
    // A vault without that key refuses, naming the key (never guessing).
    assert.throws(() => taskToken(new Vault(randomBytes(32)), job), (error: Error) => error instanceof VaultError && error.message.includes(vault.keyId))
  })
})

describe('delivery jobs enqueued before tokens were derived', () => {
  it('still deliver their plaintext token; sealed ones open with the vault, bound to their task', () => {
    const vault = new Vault(randomBytes(32))
    assert.equal(taskToken(vault, { taskId: 't1', token: 'tdt_plain', dispatch: 1 }), 'tdt_plain')
    const job = { taskId: 't1', token: vault.seal('tdt_sealed', 'task token t1'), dispatch: 1 }
    assert.equal(taskToken(vault, job), 'tdt_sealed')
    assert.throws(() => taskToken(vault, { ...job, taskId: 't2' }), VaultError)
  })
})
