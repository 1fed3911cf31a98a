// The task time-out of a phase done by a remote A2A agent stands still while Tandem's operators are asked on the
// remote's behalf (its INPUT_REQUIRED as an inbox question) and runs again, later by the pause, once answered;
// a remote that never asks keeps its plain time-out. Against an SDK-built remote on loopback, both databases.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { advanceClock, pendingJobs } from '../clock.js'
import { waitFor } from '../runs/agent-server.js'
import { createAgent, createCycle, createStream, runIn, startRun } from '../runs/setup.js'
import { startRemoteAgent, type RemoteAgent } from './remote-agent.js'

const TIMEOUT_S = 300

for (const dialect of dialects()) {
  describe(`A2A client: the task time-out pauses while operators are asked (${dialect})`, () => {
    let app: FastifyInstance
    let remote: RemoteAgent
    let streamId: string
    let agentId: string

    before(async () => {
      app = await build(dialect, { TANDEM_WORKERS: '4', TANDEM_EGRESS_ALLOW: '127.0.0.0/8', TANDEM_POLL_INTERVAL_MS: '50', TANDEM_TASK_TIMEOUT_S: String(TIMEOUT_S) }, { ownDatabase: true })
      remote = await startRemoteAgent()
      streamId = await createStream(app)
      agentId = await createAgent(app, { name: 'Remote', providerType: 'custom_webhook', endpointUrl: remote.cardUrl, config: { protocol: 'a2a' } })
    })
    after(async () => {
      await app.close()
      await remote.close()
    })

    const taskOf = async (runId: string) =>
      app.database.db.selectFrom('run_tasks').select(['id', 'created_at', 'clock_paused_ms']).where('run_id', '=', runId).executeTakeFirstOrThrow()
    const due = async (taskId: string) => (await pendingJobs(app, `timeout:${taskId}`)).map((j) => Date.parse(j.runAt))

    it('a remote that works without asking: the time-out is due TANDEM_TASK_TIMEOUT_S after the task, nothing paused', async () => {
      remote.behaviour = 'work'
      const run = await startRun(app, streamId, await createCycle(app, streamId, [{ agentId, name: 'Work' }], 'work'))
      const task = await taskOf(run.id)
      const [runAt] = await waitFor(async () => ((await due(task.id)).length === 1 ? due(task.id) : undefined))
      assert.equal(runAt, Date.parse(task.created_at) + TIMEOUT_S * 1000)
      assert.equal(Number((await taskOf(run.id)).clock_paused_ms), 0)
      remote.finish('done')
      assert.equal((await runIn(app, run.id, ['succeeded', 'failed'])).status, 'succeeded')
    })

    it('asked: no time-out and no look at the remote while the question waits; answered: the time-out is back, later by the pause', async () => {
      remote.behaviour = 'ask-then-work'
      const run = await startRun(app, streamId, await createCycle(app, streamId, [{ agentId, name: 'Ask' }], 'ask'))
      const waiting = await runIn(app, run.id, 'waiting')
      assert.equal(waiting.phases[0].status, 'awaiting_input')
      const task = await taskOf(run.id)
      assert.deepEqual(await due(task.id), [], 'the clock stands still')
      assert.deepEqual(await pendingJobs(app, `deliver:${task.id}`), [], 'the remote is not looked at')
      const ledger = await app.database.db.selectFrom('a2a_remote_tasks').select('remote_task_id').where('task_id', '=', task.id).executeTakeFirstOrThrow()
      const pausedAt = (await app.database.db.selectFrom('run_tasks').select('clock_paused_at').where('id', '=', task.id).executeTakeFirstOrThrow()).clock_paused_at
      assert.ok(pausedAt)
      const looksBefore = remote.calls.filter((c) => c.method === 'GetTask').length
      const answeredAt = Date.now()
      const answered = await send(app, 'POST', `/api/runs/${run.id}/phases/${waiting.phases[0].id}/answer`, { text: '1969' })
      assert.equal(answered.statusCode, 200, answered.body)
      // The answer reaches the remote on the same task; the remote then works on it.
      await waitFor(async () => (remote.received.some((m) => m.taskId === ledger.remote_task_id) ? true : undefined))
      const resumed = await taskOf(run.id)
      const paused = Number(resumed.clock_paused_ms)
      assert.ok(paused >= answeredAt - Date.parse(pausedAt), `paused ${paused} ms`)
      const [runAt] = await waitFor(async () => ((await due(task.id)).length === 1 ? due(task.id) : undefined))
      assert.equal(runAt, Date.parse(task.created_at) + TIMEOUT_S * 1000 + paused, 'due later by the pause')
      assert.ok(remote.calls.filter((c) => c.method === 'GetTask').length > looksBefore, 'looked at again after the answer')
      assert.equal((await app.database.db.selectFrom('run_tasks').select('clock_paused_at').where('id', '=', task.id).executeTakeFirstOrThrow()).clock_paused_at, null)
      // The time-out, when it falls due, still ends the attempt.
      await advanceClock(app, `timeout:${task.id}`)
      const failed = await runIn(app, run.id, 'failed')
      assert.match(failed.phases[0].error.type, /agent-timeout$/)
      remote.finish('too late')
    })
  })
}
