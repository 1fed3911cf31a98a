// Decision policies (docs/operators.md): the policy on save (400s with pointers), copied into runs; quorum of
// distinct approvers; immediate escalation when no one of the pool exists; and the timers at their shortest
// (PT5S, the floor; the clock moved on by running the due jobs through the task list, test/clock.ts): one
// reminder, escalation to admins, expiry deciding onExpire as `system`, and no timer after a decision.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { startAgentServer } from '../runs/agent-server.js'
import { createAgent, createStream, NIL, runIn } from '../runs/setup.js'
import { keyFor } from '../schedules/setup.js'
import { runClockTimer, type ClockJob } from '../../src/waits/clock.js'
import { CLOCK_EFFECTS } from '../../src/runs/machine/machine.js'
import { advanceClock, pendingCount } from '../clock.js'
import { waitFor } from '../wait.js'
import { openInboxFeed } from './feed-client.js'

for (const dialect of dialects()) {
  describe(`decision policies (${dialect})`, () => {
    let app: FastifyInstance
    let maria: Record<string, string>
    let tom: Record<string, string>
    let boss: Record<string, string>
    before(async () => {
      app = await build(dialect, { TANDEM_EGRESS_ALLOW: '127.0.0.0/8' }, { ownDatabase: true })
      maria = await keyFor(app, 'maria', 'member')
      tom = await keyFor(app, 'tom', 'member')
      boss = await keyFor(app, 'boss', 'admin')
    })
    after(async () => app.close())

    const phase = (overrides: Record<string, unknown> = {}) => ({ id: randomUUID(), agentId: NIL, goal: 'Check it', instructions: 'i', autoAdvance: false, phaseName: 'Check', operatorPool: ['maria', 'tom'], ...overrides })
    async function save(streamId: string, body: Record<string, unknown>) {
      return send(app, 'POST', `/api/cycles/streams/${streamId}/cycles`, { triggerName: 'pay', description: 'Pay', ...body })
    }
    /** A stream with one saved cycle (people's work unless told) and a run of it, waiting. */
    async function waitingRun(policy: unknown, phases = [phase()]) {
      const streamId = await createStream(app, `p-${randomUUID().slice(0, 8)}`)
      const saved = await save(streamId, { phasesTemplate: phases, ...(policy === undefined ? {} : { policy }) })
      assert.equal(saved.statusCode, 201, saved.body)
      const [started] = (await send(app, 'POST', `/api/streams/${streamId}/triggers/pay`, {})).json().runs
      return { streamId, run: await runIn(app, started.id, ['waiting', 'failed']) }
    }
    const decideAs = (headers: Record<string, string>, run: any, decision: string, extra: Record<string, unknown> = {}) =>
      send(app, 'POST', `/api/runs/${run.id}/phases/${run.phases[0].id}/decision`, { decision, ...extra }, headers)
    const inbox = async (headers: Record<string, string>) => (await send(app, 'GET', '/api/me/inbox?limit=100', undefined, headers)).json().data as any[]
    const eventsOf = async (streamId: string, type: string) => ((await send(app, 'GET', `/api/streams/${streamId}/events?limit=100`)).json().data as any[]).filter((e) => e.type === type)

    const pendingJobs = (text: string) => pendingCount(app, text)

    it('checks the policy: durations between PT5S and P90D, onExpire, quorum, phase ids — one 400 naming each', async () => {
      const streamId = await createStream(app, 'policy-checks')
      const p = phase()
      const stranger = randomUUID()
      const res = await save(streamId, {
        phasesTemplate: [p],
        policy: { decision: { remindAfter: 'P1M', escalateAfter: 'PT4S', expireAfter: 'P91D' }, phases: { [p.id]: { remindAfter: 'soon' }, [stranger]: { quorum: 2 } } },
      })
      assert.equal(res.statusCode, 400, res.body)
      const pointers = res.json().errors.map((e: any) => e.pointer).sort()
      assert.deepEqual(pointers, ['/policy/decision/escalateAfter', '/policy/decision/expireAfter', '/policy/decision/remindAfter', `/policy/phases/${p.id}/remindAfter`, `/policy/phases/${stranger}`].sort())
      const details = Object.fromEntries(res.json().errors.map((e: any) => [e.pointer, e.detail]))
      assert.match(details['/policy/decision/remindAfter'], /months have no fixed length/)
      assert.match(details['/policy/decision/escalateAfter'], /at least PT5S/)
      assert.match(details['/policy/decision/expireAfter'], /at most P90D/)
      assert.match(details[`/policy/phases/${stranger}`], /not the id of a phase/)
      const schema = await save(streamId, { phasesTemplate: [phase()], policy: { decision: { quorum: 11, onExpire: 'ignore' }, extra: 1 } })
      assert.equal(schema.statusCode, 400, schema.body)
      const schemaPointers = schema.json().errors.map((e: any) => e.pointer)
      for (const pointer of ['/policy/decision/quorum', '/policy/decision/onExpire']) assert.ok(schemaPointers.includes(pointer), `${pointer} in ${schemaPointers}`)
      // A quorum the pool cannot reach is saved, with a warning.
      const short = phase({ operatorPool: ['maria'] })
      const warned = await save(streamId, { phasesTemplate: [short], policy: { decision: { quorum: 2 } } })
      assert.equal(warned.statusCode, 201, warned.body)
      assert.deepEqual(warned.json().warnings.map((w: any) => [w.code, w.phaseId]), [['quorum-above-pool', short.id]])
      // Boundaries are accepted: PT5S and P90D (and weeks, days, hours together).
      assert.equal((await save(streamId, { phasesTemplate: [phase()], policy: { decision: { remindAfter: 'PT5S', escalateAfter: 'P1W2DT3H4M5S', expireAfter: 'P90D', quorum: 10 } } })).statusCode, 201)
    })

    it('GET returns the policy; a run copies it per phase, the phase entry over the cycle field by field', async () => {
      const first = phase()
      const second = phase({ phaseName: 'Pay' })
      const policy = { decision: { remindAfter: 'PT1H', escalateAfter: 'PT4H', expireAfter: 'P1D', quorum: 1 }, phases: { [second.id.toUpperCase()]: { quorum: 2, expireAfter: 'PT30M', onExpire: 'approve' } } }
      const { streamId, run } = await waitingRun(policy, [first, second])
      const [cycle] = (await send(app, 'GET', `/api/cycles/streams/${streamId}/cycles`)).json().data
      assert.deepEqual(cycle.policy, { ...policy, phases: { [second.id]: policy.phases[second.id.toUpperCase()] } })
      assert.deepEqual(run.phases[0].policy, { remindAfter: 'PT1H', escalateAfter: 'PT4H', expireAfter: 'P1D', onExpire: 'reject', quorum: 1 })
      assert.deepEqual(run.phases[1].policy, { remindAfter: 'PT1H', escalateAfter: 'PT4H', expireAfter: 'PT30M', onExpire: 'approve', quorum: 2 })
      assert.deepEqual(run.phases[1].approvals, { have: 0, need: 2 })
      // The inbox shows the deadlines from the moment the phase began waiting.
      const item = (await inbox(maria)).find((i) => i.runId === run.id)
      const since = Date.parse(run.phases[0].deadlines.since)
      assert.equal(Date.parse(item.remindAt) - since, 3600_000)
      assert.equal(Date.parse(item.escalateAt) - since, 4 * 3600_000)
      assert.equal(Date.parse(item.expireAt) - since, 86400_000)
      // A cycle without a policy reads as before: no policy field; its runs' phases get the defaults.
      const plain = await createStream(app, 'plain')
      const saved = (await save(plain, { phasesTemplate: [phase()] })).json()
      assert.equal('policy' in saved, false)
      await send(app, 'POST', `/api/runs/${run.id}/cancel`, {})
    })

    it('quorum: distinct approvers; the same one twice is a 409; an approver\'s item leaves their inbox; one reject rejects', async () => {
      const { run } = await waitingRun({ decision: { quorum: 2 } })
      assert.deepEqual(run.phases[0].approvals, { have: 0, need: 2 })
      const first = await decideAs(maria, run, 'approve', { note: 'looks right' })
      assert.equal(first.statusCode, 200, first.body)
      assert.equal(first.json().status, 'waiting')
      assert.deepEqual(first.json().phases[0].approvals, { have: 1, need: 2 })
      const again = await decideAs(maria, run, 'approve')
      assert.equal(again.statusCode, 409)
      assert.equal(again.json().type, 'urn:tandem:problem:already-approved')
      assert.equal((await inbox(maria)).some((i) => i.runId === run.id), false, 'gone from the approver\'s inbox')
      const toms = (await inbox(tom)).find((i) => i.runId === run.id)
      assert.deepEqual(toms.approvals, { have: 1, need: 2 })
      const second = await decideAs(tom, run, 'approve')
      assert.equal(second.json().status, 'succeeded')
      assert.deepEqual(second.json().phases[0].approvals, { have: 2, need: 2 })
      assert.equal(second.json().phases[0].output.text, 'looks right', 'people\'s work: the latest note of the round is the output')

      const { run: other } = await waitingRun({ decision: { quorum: 3 } })
      assert.equal((await decideAs(maria, other, 'approve')).statusCode, 200)
      const rejected = await decideAs(tom, other, 'reject', { note: 'wrong account' })
      assert.equal(rejected.json().status, 'rejected')
    })

    it('quorum with revise: a revise sends the phase back and clears the approvals', async () => {
      const agent = await startAgentServer()
      try {
        const agentId = await createAgent(app, { endpointUrl: agent.url })
        const { run } = await waitingRun({ decision: { quorum: 2, remindAfter: 'PT1H', expireAfter: 'P1D' } }, [phase({ agentId })])
        assert.equal(await pendingJobs(`${run.phases[0].id}:1:`), 2, 'attempt 1: a reminder and an expiry')
        assert.equal((await decideAs(maria, run, 'approve')).statusCode, 200)
        const revised = await decideAs(tom, run, 'revise', { note: 'shorter' })
        assert.equal(revised.statusCode, 200, revised.body)
        assert.deepEqual(revised.json().phases[0].approvals, { have: 0, need: 2 })
        const back = await waitFor(async () => {
          const r = (await send(app, 'GET', `/api/runs/${run.id}`)).json()
          return r.phases[0].status === 'awaiting_decision' ? r : undefined
        }, { timeoutMs: 15000, what: 'the second attempt' })
        assert.deepEqual(back.phases[0].approvals, { have: 0, need: 2 })
        assert.equal(await pendingJobs(`${run.phases[0].id}:1:`), 0, 'the revise removed attempt 1\'s timers')
        assert.equal(await pendingJobs(`${run.phases[0].id}:2:`), 2, 'attempt 2 has its own')
        assert.equal((await decideAs(maria, back, 'approve')).json().status, 'waiting', 'maria may approve again in the new round')
        assert.equal((await decideAs(tom, back, 'approve')).json().status, 'succeeded')
        assert.equal(await pendingJobs(run.phases[0].id), 0)
      } finally {
        await agent.close()
      }
    })

    it('no one to decide: a pool no principal has escalates at once, to the admins, with an event', async () => {
      const { streamId, run } = await waitingRun(undefined, [phase({ operatorPool: ['@marai'] })])
      assert.equal(run.phases[0].escalated, true)
      const [event] = await eventsOf(streamId, 'decision.escalated')
      assert.equal(event.data.reason, 'no-pool')
      assert.equal(event.data.phaseRunId, run.phases[0].id)
      assert.equal(event.data.escalated, true)
      const item = (await inbox(boss)).find((i) => i.runId === run.id)
      assert.equal(item.escalated, true)
      assert.equal((await inbox(maria)).some((i) => i.runId === run.id), false)
      const decided = await decideAs(boss, run, 'approve')
      assert.equal(decided.statusCode, 200, decided.body)
      assert.equal(decided.json().phases[0].decisions[0].override, undefined, 'as if in the pool: no override needed')
    })

    it('a timer\'s job that runs twice (at once, or again later) takes effect once; one of an earlier attempt, never', async () => {
      const { streamId, run } = await waitingRun({ decision: { remindAfter: 'PT1H', escalateAfter: 'PT2H' } })
      const job = (timer: ClockJob['timer'], attempt = 0): ClockJob => ({ clock: 'decision', runId: run.id, phaseRunId: run.phases[0].id, callId: null, attempt, timer })
      await Promise.all([runClockTimer(app, job('remind'), CLOCK_EFFECTS), runClockTimer(app, job('remind'), CLOCK_EFFECTS)])
      await runClockTimer(app, job('remind'), CLOCK_EFFECTS)
      await runClockTimer(app, job('escalate', 7), CLOCK_EFFECTS)
      assert.equal((await eventsOf(streamId, 'decision.reminder')).length, 1)
      assert.equal((await eventsOf(streamId, 'decision.escalated')).length, 0, 'another attempt\'s timer does nothing')
      await Promise.all([runClockTimer(app, job('escalate'), CLOCK_EFFECTS), runClockTimer(app, job('escalate'), CLOCK_EFFECTS)])
      assert.equal((await eventsOf(streamId, 'decision.escalated')).length, 1)
      assert.ok((await inbox(boss)).some((i) => i.runId === run.id && i.escalated))
      assert.equal((await decideAs(boss, run, 'reject')).json().status, 'rejected')
      await runClockTimer(app, job('remind'), CLOCK_EFFECTS)
      assert.equal((await eventsOf(streamId, 'decision.reminder')).length, 1, 'nothing after a decision')
    })

    it('escalation reaches the admins\' live feeds: inbox.added (escalated), then inbox.removed once decided', { timeout: 30000 }, async () => {
      const { run } = await waitingRun({ decision: { escalateAfter: 'PT1H' } })
      // A run in the admin's own pool: its item in the feed shows the feed follows the streams and sent what it read.
      const { run: own } = await waitingRun(undefined, [phase({ operatorPool: ['boss'] })])
      await app.listen({ port: 0, host: '127.0.0.1' })
      const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
      const feed = await openInboxFeed(`${base}/api/me/inbox/events`, boss)
      const { events } = feed
      assert.equal(feed.res.status, 200)
      try {
        await waitFor(() => events.find((e) => e.event === 'inbox.added' && e.data.runId === own.id), { what: 'the admin\'s own item in the feed' })
        assert.equal(events.some((e) => e.data.runId === run.id), false, 'not the admin\'s before the escalation')
        await runClockTimer(app, { clock: 'decision', runId: run.id, phaseRunId: run.phases[0].id, callId: null, attempt: 0, timer: 'escalate' }, CLOCK_EFFECTS)
        const added = await waitFor(() => events.find((e) => e.event === 'inbox.added' && e.data.runId === run.id), { what: 'inbox.added on escalation' })
        assert.equal(added.data.escalated, true)
        assert.equal((await decideAs(boss, run, 'approve')).statusCode, 200)
        await waitFor(() => events.find((e) => e.event === 'inbox.removed' && e.data.runId === run.id), { what: 'inbox.removed' })
      } finally {
        await feed.close()
      }
    })

    it('timers at PT5S: one reminder, escalation to admins, expiry as `system` (reject, approve, fail); none after a decision', async () => {
      const timers = { remindAfter: 'PT5S', escalateAfter: 'PT5S', expireAfter: 'PT10S' }
      const rejects = await waitingRun({ decision: timers })
      const approves = await waitingRun({ decision: { expireAfter: 'PT5S', onExpire: 'approve', quorum: 2 } })
      const fails = await waitingRun({ decision: { expireAfter: 'PT5S', onExpire: 'fail' } })
      const decided = await waitingRun({ decision: timers })
      assert.equal(await pendingJobs(decided.run.phases[0].id), 3, 'three timers armed')
      assert.equal((await decideAs(maria, decided.run, 'approve')).json().status, 'succeeded')
      assert.equal(await pendingJobs(decided.run.phases[0].id), 0, 'the decision removed its timers')

      // Six seconds on: the reminder and the escalation of the first run are due, not its expiry (at ten).
      assert.deepEqual((await advanceClock(app, rejects.run.phases[0].id, 6000)).map((j) => j.key.split(':').at(-1)).sort(), ['escalate', 'remind'])
      // Escalated: the item joins the admin's inbox and admins may decide.
      const escalated = (await inbox(boss)).find((i) => i.runId === rejects.run.id)
      assert.equal(escalated.escalated, true)
      const [reminder] = await eventsOf(rejects.streamId, 'decision.reminder')
      assert.equal(reminder.data.runId, rejects.run.id)
      assert.equal(reminder.data.kind, 'decision')
      const [escalation] = await eventsOf(rejects.streamId, 'decision.escalated')
      assert.equal(escalation.data.reason, 'timer')

      for (const { run } of [approves, fails]) assert.equal((await advanceClock(app, run.phases[0].id, 6000)).length, 1)
      assert.equal((await advanceClock(app, rejects.run.phases[0].id, 11000)).length, 1)
      const approved = await runIn(app, approves.run.id, 'succeeded', 15000)
      assert.deepEqual(approved.phases[0].decisions.map((d: any) => [d.decision, d.handle, d.principalId, d.expired]), [['approve', 'system', 'system', true]])
      const failed = await runIn(app, fails.run.id, 'failed', 15000)
      assert.equal(failed.error.type, 'urn:tandem:problem:decision-expired')
      assert.equal(failed.phases[0].decisions[0].decision, 'fail')
      const rejected = await runIn(app, rejects.run.id, 'rejected', 15000)
      assert.deepEqual(rejected.phases[0].decisions.map((d: any) => [d.decision, d.handle, d.expired]), [['reject', 'system', true]])
      assert.match(rejected.error.detail, /@system/)

      // Exactly one of each, and nothing ever for the run decided first: no timer is left to take effect later.
      for (const { run } of [rejects, approves, fails, decided]) assert.equal(await pendingJobs(run.phases[0].id), 0)
      assert.equal((await eventsOf(rejects.streamId, 'decision.reminder')).length, 1)
      assert.equal((await eventsOf(rejects.streamId, 'decision.escalated')).length, 1)
      assert.equal((await eventsOf(decided.streamId, 'decision.reminder')).length, 0)
      assert.equal((await eventsOf(decided.streamId, 'decision.escalated')).length, 0)
      assert.equal((await send(app, 'GET', `/api/runs/${decided.run.id}`)).json().phases[0].decisions.length, 1)
    })
  })
}
