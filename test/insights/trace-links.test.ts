// Traces of runs no request started (docs/insights.md, "Traces"): a schedule's run and a message trigger's run are
// each a trace of their own, invoke_workflow its root with its agents' spans under it; the schedule's run names the
// schedule, and the run a message of another run started links to that run's invoke_workflow. No input or message
// text in any span. Spans reach a local OTLP/HTTP receiver (JSON); the schedule fires through the test clock.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { startAgentServer, waitFor, type AgentServer } from '../runs/agent-server.js'
import { createAgent, createCycle, createStream } from '../runs/setup.js'
import { runsOf } from '../schedules/setup.js'
import { advanceClock } from '../clock.js'
import { derivedSpanId } from '../../src/tracing/ids.js'
import { attr, startOtlpReceiver, type OtlpReceiver } from './otlp.js'


const ANSWER = 'the confidential answer, /next please'

for (const dialect of dialects()) {
  describe(`trace links (${dialect})`, () => {
    let app: FastifyInstance
    let otlp: OtlpReceiver
    let agent: AgentServer
    let agentId: string
    const spans = () => otlp.spans()
    const workflowOf = (runId: string) => spans().find((s) => s.name.startsWith('invoke_workflow') && attr(s, 'tandem.run.id') === runId)
    const finished = async (streamId: string, count: number) => waitFor(async () => {
      const runs = await runsOf(app, streamId)
      return runs.length === count && runs.every((r) => r.status === 'succeeded') ? runs : undefined
    }, 15000, `${count} runs to succeed`)

    before(async () => {
      otlp = await startOtlpReceiver()
      agent = await startAgentServer(() => ({ status: 200, body: { output: { text: ANSWER } } }))
      app = await build(dialect, { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '10', TANDEM_EGRESS_ALLOW: '127.0.0.0/8' }, { ownDatabase: true })
      agentId = await createAgent(app, { name: 'Writer', endpointUrl: agent.url })
    })
    after(async () => {
      await app.close()
      await agent.close()
      otlp.server.close()
    })

    it('a schedule\'s run is a trace of its own: invoke_workflow the root, naming the schedule, its agent under it', { timeout: 30000 }, async () => {
      const streamId = await createStream(app, 'traced-schedule')
      await createCycle(app, streamId, [{ agentId, autoAdvance: true }], 'nightly')
      const schedule = (await send(app, 'POST', `/api/streams/${streamId}/schedules`, { triggerName: 'nightly', cron: '0 3 * * *', input: { secret: 'do-not-leak' } })).json()
      const fired = await advanceClock(app, `schedule:${schedule.id}`)
      assert.equal(fired.length, 1)
      const [run] = await finished(streamId, 1)
      const workflow = await waitFor(() => workflowOf(run.id), 10000, 'the scheduled run\'s invoke_workflow')
      assert.equal(workflow.parentSpanId || undefined, undefined, 'the trace\'s root')
      assert.equal(workflow.spanId, derivedSpanId('invoke_workflow', run.id))
      assert.equal(attr(workflow, 'tandem.schedule.id'), schedule.id)
      assert.equal(attr(workflow, 'tandem.trigger.kind'), 'schedule')
      // Its only links are to requests that acted on it (the agent's answer), never to a run's invoke_workflow.
      assert.ok((workflow.links ?? []).every((l) => !spans().some((s) => s.spanId === l.spanId && s.name.startsWith('invoke_workflow'))))
      const agentSpan = await waitFor(() => spans().find((s) => s.name === 'invoke_agent Writer' && attr(s, 'tandem.run.id') === run.id), 10000, 'its invoke_agent')
      assert.equal(agentSpan.traceId, workflow.traceId)
      assert.equal(agentSpan.parentSpanId, workflow.spanId)
      const otherTraces = spans().filter((s) => s.traceId === workflow.traceId && !s.name.startsWith('invoke_') && !s.name.startsWith('execute_tool') && !s.name.startsWith('tandem.wait'))
      assert.deepEqual(otherTraces.map((s) => s.name), [], 'no request span in the schedule\'s trace')
    })

    it('a run a message of another run started: its own trace, linked to that run\'s invoke_workflow', { timeout: 30000 }, async () => {
      const streamId = await createStream(app, 'traced-chain')
      const first = await createCycle(app, streamId, [{ agentId, autoAdvance: true }], 'draft')
      await createCycle(app, streamId, [{ agentId, autoAdvance: true }], 'follow-up')
      assert.equal((await send(app, 'POST', `/api/streams/${streamId}/message-triggers`, { triggerName: 'follow-up', match: { prefix: 'the confidential' } })).statusCode, 201)
      const started = await send(app, 'POST', `/api/cycles/streams/${streamId}/cycles/${first}/runs`, { input: { secret: 'do-not-leak' } })
      assert.equal(started.statusCode, 201, started.body)
      const runs = await finished(streamId, 2)
      const origin = runs.find((r) => r.cycleId === first)
      const triggered = runs.find((r) => r.cycleId !== first)
      assert.equal(triggered.trigger.kind, 'message')
      const originSpan = await waitFor(() => workflowOf(origin.id), 10000, 'the first run\'s invoke_workflow')
      const workflow = await waitFor(() => workflowOf(triggered.id), 10000, 'the triggered run\'s invoke_workflow')
      assert.ok(originSpan.parentSpanId, 'the first run is under its request')
      assert.notEqual(workflow.traceId, originSpan.traceId, 'a trace of its own')
      assert.equal(workflow.parentSpanId || undefined, undefined, 'the trace\'s root')
      assert.equal(attr(workflow, 'tandem.message_trigger.id') !== undefined, true)
      // The cause; besides it, the agent's answering request that ended the run links too (as for every run).
      assert.ok(workflow.links?.some((l) => l.traceId === originSpan.traceId && l.spanId === originSpan.spanId), JSON.stringify(workflow.links))
      const agentSpan = await waitFor(() => spans().find((s) => s.name === 'invoke_agent Writer' && attr(s, 'tandem.run.id') === triggered.id), 10000, 'its invoke_agent')
      assert.equal(agentSpan.traceId, workflow.traceId)
      assert.equal(agentSpan.parentSpanId, workflow.spanId)
      const all = otlp.received.map((r) => r.body.toString()).join('\n')
      assert.ok(!all.includes('do-not-leak'), 'no run input')
      assert.ok(!all.includes('confidential'), 'no message text')
      // Nor any token or secret the agent was handed (the task's token, a signature or authorization header).
      const secrets: string[] = []
      const walk = (value: unknown, key = ''): void => {
        if (typeof value === 'string' && /token|secret|authorization|signature/i.test(key) && value.length >= 16) secrets.push(value)
        else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) walk(v, k)
      }
      for (const delivery of agent.deliveries) walk({ headers: delivery.headers, body: delivery.body })
      assert.ok(secrets.length > 0, 'the agent was handed a token')
      for (const secret of secrets) assert.ok(!all.includes(secret), 'no token or secret')
    })

    it('without an OTLP endpoint a triggered run stores no trace', { timeout: 30000 }, async () => {
      const plain = await build(dialect, { TANDEM_EGRESS_ALLOW: '127.0.0.0/8' }, { ownDatabase: true })
      try {
        const streamId = await createStream(plain, 'untraced')
        await createCycle(plain, streamId, [{ agentId: await createAgent(plain, { endpointUrl: agent.url }), autoAdvance: true }], 'nightly')
        const schedule = (await send(plain, 'POST', `/api/streams/${streamId}/schedules`, { triggerName: 'nightly', cron: '0 3 * * *' })).json()
        await advanceClock(plain, `schedule:${schedule.id}`)
        const row = await plain.database.db.selectFrom('runs').select(['traceparent', 'trace_link']).where('stream_id', '=', streamId).executeTakeFirstOrThrow()
        assert.deepEqual(row, { traceparent: null, trace_link: null })
      } finally {
        await plain.close()
      }
    })
  })
}
