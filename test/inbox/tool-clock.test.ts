// Tool approvals and questions on the decision clock (docs/operators.md "Decision policies"), on both databases,
// through the task tool route (a custom_token_only agent, a real MCP server): each waiting call gets its own
// timers (keyed by the call) when its phase starts waiting, removed when it is decided, answered or the run is
// canceled; the inbox items show the deadlines and claims; the effects run by calling the job's handler directly
// (remind, escalate to admins, expire: deny, approve, fail; a question's no answer), and one expiry at PT5S
// through the task list with the clock moved on (test/clock.ts). A pool no one has escalates the call at once;
// start-up re-adds timers not yet taken effect.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { clockKey, resumeDecisionClocks, runClockTimer, type ClockJob } from '../../src/waits/clock.js'
import { removeJob } from '../../src/jobs/index.js'
import { ALL_CLOCK_EFFECTS } from '../../src/waits/jobs.js'
import { build, dialects, send } from '../helpers.js'
import { startFakeMcpServer, type FakeMcpServer } from '../fakes/mcp-server.js'
import { keyFor } from '../schedules/setup.js'
import { createAgent, createStream, getRun, runIn, startRun } from '../runs/setup.js'
import { waitFor } from '../runs/agent-server.js'
import { advanceClock, pendingCount, pendingJobs } from '../clock.js'
import { bearer, createKey } from '../auth.js'
import { itReadsNoWholeGrowingTable, watchFullScans, type FullScans } from '../db/full-scans.js'

const local = (url: string) => url.replace(/^https?:\/\/[^/]+/, '')

for (const dialect of dialects()) {
  describe(`tool approvals and questions on the clock (${dialect})`, () => {
    let app: FastifyInstance
    let files: FakeMcpServer
    let streamId: string
    let agentId: string
    let agentKey: string
    let maria: Record<string, string>
    let boss: Record<string, string>
    let scans: FullScans | null = null

    before(async () => {
      app = await build(dialect, { TANDEM_WORKERS: '4', TANDEM_EGRESS_ALLOW: '127.0.0.0/8' }, { ownDatabase: true })
      files = await startFakeMcpServer()
      assert.equal((await send(app, 'POST', '/api/mcp-servers', { name: 'files', url: files.url, approval: { 'delete_*': 'always' } })).statusCode, 201)
      const workspaceId = (await send(app, 'GET', '/api/me')).json().workspaceId
      agentId = await createAgent(app, { providerType: 'custom_token_only', capabilities: { streaming: false, tools: ['files.delete_file', 'tandem.ask_operator'] } })
      agentKey = (await createKey(app, { workspaceId, name: 'worker', agentId })).key
      maria = await keyFor(app, 'maria', 'member')
      boss = await keyFor(app, 'boss', 'admin')
      streamId = await createStream(app)
      scans = watchFullScans(app)
    })
    after(async () => {
      await app.close()
      await files.close()
    })

    /** A run of a one-phase cycle for the agent with `policy`, its task claimed: the payload. */
    async function claimed(policy: unknown, pool = ['@maria']): Promise<any> {
      const saved = await send(app, 'POST', `/api/cycles/streams/${streamId}/cycles`, {
        triggerName: `t-${randomUUID().slice(0, 8)}`, description: 'Clean up',
        phasesTemplate: [{ id: randomUUID(), agentId, goal: 'g', instructions: 'i', autoAdvance: true, phaseName: 'Clean', operatorPool: pool }],
        policy,
      })
      assert.equal(saved.statusCode, 201, saved.body)
      const run = await startRun(app, streamId, saved.json().id)
      const payload: any = await waitFor(async () => {
        const res = await send(app, 'POST', '/api/tasks/claim', {}, bearer(agentKey))
        return res.statusCode === 200 ? res.json() : undefined
      })
      assert.equal(payload.run.id, run.id)
      return payload
    }
    const asAgent = (payload: any) => bearer(payload.result.token)
    async function call(payload: any, name: string, input: Record<string, unknown>): Promise<string> {
      const res = await send(app, 'POST', `${local(payload.toolsUrl)}/${name}`, { input }, asAgent(payload))
      assert.equal(res.statusCode, 202, res.body)
      return res.json().callId
    }
    const inbox = async (headers: Record<string, string>) => (await send(app, 'GET', '/api/me/inbox?limit=100', undefined, headers)).json().data as any[]
    const eventsOf = async (type: string, runId: string) =>
      ((await send(app, 'GET', `/api/streams/${streamId}/events?limit=100`)).json().data as any[]).filter((e) => e.type === type && e.data.runId === runId)
    const callOf = async (runId: string, callId: string) => ((await send(app, 'GET', `/api/runs/${runId}/tool-calls`)).json().data as any[]).find((c) => c.id === callId)
    const job = (payload: any, clock: ClockJob['clock'], callId: string, timer: ClockJob['timer']): ClockJob =>
      ({ clock, runId: payload.run.id, phaseRunId: payload.phase.id, callId, attempt: 1, timer })
    const fire = (j: ClockJob) => runClockTimer(app, j, ALL_CLOCK_EFFECTS)


    it('a waiting call arms its own three timers, the inbox item shows them and a claim; the decision removes them', async () => {
      const payload = await claimed({ decision: { remindAfter: 'PT1H', escalateAfter: 'PT2H', expireAfter: 'PT3H' } })
      const first = await call(payload, 'files.delete_file', { path: '/a' })
      const second = await call(payload, 'files.delete_file', { path: '/b' })
      assert.equal(await pendingCount(app, first), 3)
      assert.equal(await pendingCount(app, second), 3, 'a call added while the phase already waits gets its own')
      const run = await getRun(app, payload.run.id)
      assert.deepEqual(run.phases[0].toolWaits.map((w: any) => [w.callId, w.kind, w.escalated]), [[first, 'tool_approval', false], [second, 'tool_approval', false]])
      const item = (await inbox(maria)).find((i) => i.callId === first)
      assert.equal(item.kind, 'tool_approval')
      assert.equal(item.expireAt, run.phases[0].toolWaits[0].expireAt)
      assert.ok(item.remindAt < item.escalateAt && item.escalateAt < item.expireAt)
      assert.equal((await inbox(boss)).some((i) => i.runId === payload.run.id), false, 'not an admin\'s before escalation')

      const claim = await send(app, 'POST', `/api/runs/${run.id}/phases/${run.phases[0].id}/claim`, undefined, maria)
      assert.equal(claim.statusCode, 200, claim.body)
      assert.deepEqual([claim.json().kind, claim.json().callId, claim.json().claimedBy], ['tool_approval', first, 'maria'])
      assert.equal((await inbox(maria)).find((i) => i.callId === second).claimedBy, 'maria')
      assert.equal((await send(app, 'POST', `/api/runs/${run.id}/phases/${run.phases[0].id}/claim`, undefined, boss)).statusCode, 403)

      assert.equal((await send(app, 'POST', `/api/runs/${run.id}/tool-calls/${first}/decision`, { decision: 'deny' }, maria)).statusCode, 200)
      assert.equal(await pendingCount(app, first), 0, 'the decision removed its timers')
      assert.equal(await pendingCount(app, second), 3, 'the other call still waits')
      await fire(job(payload, 'tool_approval', first, 'remind'))
      assert.equal((await eventsOf('decision.reminder', run.id)).length, 0, 'a decided call\'s timer does nothing')
      assert.equal((await send(app, 'DELETE', `/api/runs/${run.id}/phases/${run.phases[0].id}/claim`, undefined, maria)).statusCode, 204)
      assert.equal((await send(app, 'POST', `/api/runs/${run.id}/cancel`, {}, maria)).statusCode, 200)
      assert.equal(await pendingCount(app, second), 0, 'the cancel removed the rest')
      assert.equal((await getRun(app, run.id)).phases[0].toolWaits, undefined)
    })

    it('reminder, escalation to admins (who may then decide), expiry denies as @system', async () => {
      const payload = await claimed({ decision: { remindAfter: 'PT1H', escalateAfter: 'PT2H', expireAfter: 'PT3H' } })
      const callId = await call(payload, 'files.delete_file', { path: '/c' })
      await Promise.all([fire(job(payload, 'tool_approval', callId, 'remind')), fire(job(payload, 'tool_approval', callId, 'remind'))])
      const reminders = await eventsOf('decision.reminder', payload.run.id)
      assert.equal(reminders.length, 1)
      assert.deepEqual([reminders[0].data.kind, reminders[0].data.callId], ['tool_approval', callId])
      assert.equal((await send(app, 'POST', `/api/runs/${payload.run.id}/tool-calls/${callId}/decision`, { decision: 'approve' }, boss)).statusCode, 403, 'not before escalation')
      await fire(job(payload, 'tool_approval', callId, 'escalate'))
      const [escalation] = await eventsOf('decision.escalated', payload.run.id)
      assert.deepEqual([escalation.data.kind, escalation.data.reason, escalation.data.escalated], ['tool_approval', 'timer', true])
      assert.equal((await inbox(boss)).find((i) => i.callId === callId)?.escalated, true)
      await fire(job(payload, 'tool_approval', callId, 'expire'))
      const denied = await callOf(payload.run.id, callId)
      assert.deepEqual([denied.status, denied.error, denied.approval.handle], ['denied', 'denied by @system: expired', 'system'])
      const run = await getRun(app, payload.run.id)
      assert.deepEqual([run.status, run.phases[0].status, run.phases[0].toolWaits], ['running', 'running', undefined])
      assert.equal(files.calls.filter((c) => (c.arguments as any).path === '/c').length, 0)
      assert.equal(await pendingCount(app, callId), 0)
    })

    it('an escalated call: an admin outside the pool decides it', async () => {
      const payload = await claimed({ decision: { escalateAfter: 'PT2H' } })
      const callId = await call(payload, 'files.delete_file', { path: '/d' })
      await fire(job(payload, 'tool_approval', callId, 'escalate'))
      const decided = await send(app, 'POST', `/api/runs/${payload.run.id}/tool-calls/${callId}/decision`, { decision: 'approve' }, boss)
      assert.equal(decided.statusCode, 200, decided.body)
      await waitFor(async () => (await callOf(payload.run.id, callId)).status === 'succeeded' || undefined)
    })

    it('expiry: onExpire approve makes the call; fail fails the phase with decision-expired', async () => {
      const approves = await claimed({ decision: { expireAfter: 'PT1H', onExpire: 'approve' } })
      const approved = await call(approves, 'files.delete_file', { path: '/e' })
      await fire(job(approves, 'tool_approval', approved, 'expire'))
      assert.deepEqual((await callOf(approves.run.id, approved)).approval.handle, 'system')
      await waitFor(async () => (await callOf(approves.run.id, approved)).status === 'succeeded' || undefined)
      assert.equal(files.calls.filter((c) => (c.arguments as any).path === '/e').length, 1)

      const fails = await claimed({ decision: { expireAfter: 'PT1H', onExpire: 'fail' } })
      const failed = await call(fails, 'files.delete_file', { path: '/f' })
      await fire(job(fails, 'tool_approval', failed, 'expire'))
      const run = await getRun(app, fails.run.id)
      assert.deepEqual([run.status, run.phases[0].status, run.error.type], ['failed', 'failed', 'urn:tandem:problem:decision-expired'])
      assert.equal((await callOf(fails.run.id, failed)).status, 'denied')
      assert.equal(await pendingCount(app, failed), 0)
    })

    it('a question: its clock, then expiry answers nothing (the tool result says so) or, with fail, fails the phase', async () => {
      const payload = await claimed({ decision: { remindAfter: 'PT1H', expireAfter: 'PT2H' } })
      const callId = await call(payload, 'tandem.ask_operator', { question: 'Which one?' })
      assert.equal(await pendingCount(app, callId), 2)
      const item = (await inbox(maria)).find((i) => i.callId === callId)
      assert.deepEqual([item.kind, item.expireAt === null, item.escalateAt], ['question', false, null])
      const run = await getRun(app, payload.run.id)
      const claim = await send(app, 'POST', `/api/runs/${run.id}/phases/${run.phases[0].id}/claim`, undefined, maria)
      assert.deepEqual([claim.statusCode, claim.json().kind, claim.json().claimedBy], [200, 'question', 'maria'])
      await fire(job(payload, 'question', callId, 'remind'))
      assert.equal((await eventsOf('decision.reminder', payload.run.id))[0].data.kind, 'question')
      await fire(job(payload, 'question', callId, 'expire'))
      const expired = await callOf(payload.run.id, callId)
      assert.deepEqual([expired.status, expired.error], ['failed', 'no answer before the deadline'])
      assert.equal((await getRun(app, payload.run.id)).phases[0].status, 'running')
      const late = await send(app, 'POST', `/api/runs/${run.id}/phases/${run.phases[0].id}/answer`, { text: 'too late' }, maria)
      assert.equal(late.statusCode, 409)

      const fails = await claimed({ decision: { expireAfter: 'PT1H', onExpire: 'fail' } })
      const asked = await call(fails, 'tandem.ask_operator', { question: 'Now?' })
      await fire(job(fails, 'question', asked, 'expire'))
      const failed = await getRun(app, fails.run.id)
      assert.deepEqual([failed.status, failed.error.type], ['failed', 'urn:tandem:problem:decision-expired'])
    })

    it('start-up re-adds the timers of a waiting call that have not taken effect', async () => {
      const payload = await claimed({ decision: { remindAfter: 'PT1H', escalateAfter: 'PT2H', expireAfter: 'PT3H' } })
      const callId = await call(payload, 'files.delete_file', { path: '/r' })
      await fire(job(payload, 'tool_approval', callId, 'remind'))
      for (const timer of ['remind', 'escalate', 'expire'] as const) await removeJob(app.database.db, clockKey(job(payload, 'tool_approval', callId, timer)))
      assert.equal(await pendingCount(app, callId), 0)
      await resumeDecisionClocks(app.database.db)
      assert.equal(await pendingCount(app, callId), 2, 'escalate and expire; the reminder took effect already')
      assert.equal((await send(app, 'POST', `/api/runs/${payload.run.id}/cancel`, {}, maria)).statusCode, 200)
      assert.equal(await pendingCount(app, callId), 0)
    })

    it('no one to decide: a pool no principal has escalates the call at once', async () => {
      const payload = await claimed({ decision: { escalateAfter: 'PT1H' } }, ['@nobody-here'])
      const callId = await call(payload, 'files.delete_file', { path: '/g' })
      assert.equal(await pendingCount(app, callId), 0, 'no escalation timer')
      const [event] = await eventsOf('decision.escalated', payload.run.id)
      assert.deepEqual([event.data.reason, event.data.callId, event.data.escalated], ['no-pool', callId, true])
      assert.equal((await inbox(boss)).find((i) => i.callId === callId)?.escalated, true)
      assert.equal((await send(app, 'POST', `/api/runs/${payload.run.id}/tool-calls/${callId}/decision`, { decision: 'deny', note: 'no' }, boss)).statusCode, 200)
    })

    it('at PT5S: a tool approval\'s expiry is due five seconds on; then it expires once, denied by @system', async () => {
      const payload = await claimed({ decision: { expireAfter: 'PT5S' } })
      const asked = Date.now()
      const callId = await call(payload, 'files.delete_file', { path: '/h' })
      const answered = Date.now()
      const [expiry] = await pendingJobs(app, callId)
      const due = Date.parse(expiry?.runAt ?? '')
      assert.ok(due >= asked + 5000 - 1000 && due <= answered + 5000 + 1000, `due ${due - asked} ms after the call was asked for, ${due - answered} ms after its answer`)
      assert.equal((await advanceClock(app, callId, due - Date.now() + 1)).length, 1)
      const denied = await callOf(payload.run.id, callId)
      assert.equal(denied.status, 'denied')
      assert.equal(denied.error, 'denied by @system: expired')
      await runIn(app, payload.run.id, 'running')
      assert.equal(await pendingCount(app, callId), 0)
    })

    // Last: after every flow above, what they read.
    if (dialect === 'sqlite') itReadsNoWholeGrowingTable(() => scans)
  })
}
