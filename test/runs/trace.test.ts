// W3C trace context through the run engine, on both databases, against a real webhook agent and a real webhook
// receiver on 127.0.0.1: the request that starts a run sets its trace; every delivery of its tasks (the first
// phase, the next one dispatched by the worker after an agent's late answer, a revision an operator asks for)
// and every webhook delivery of its events carries that trace id with a span of its own; an invalid incoming
// traceparent starts a new trace and is never passed on.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { startReceiver } from '../events/receiver.js'
import { startAgentServer, waitFor, type AgentServer } from './agent-server.js'
import { createAgent, createCycle, createStream, runIn } from './setup.js'

const FORM = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736'
const SPAN = '00f067aa0ba902b7'

/** The parts of a well-formed traceparent header (fails the test on anything else). */
function parts(header: string | string[] | undefined): { traceId: string; spanId: string; flags: string } {
  const match = FORM.exec(String(header))
  assert.ok(match, `a well-formed traceparent, not ${String(header)}`)
  return { traceId: match[1] as string, spanId: match[2] as string, flags: match[3] as string }
}

const traceparent = (traceId: string, spanId = SPAN, flags = '01') => ({ traceparent: `00-${traceId}-${spanId}-${flags}` })

for (const dialect of dialects()) {
  describe(`trace context (${dialect})`, () => {
    let app: FastifyInstance
    let agent: AgentServer
    let agentId: string
    let streamId: string

    before(async () => {
      app = await build(dialect, { TANDEM_WORKERS: '4', TANDEM_AUTH: 'local', TANDEM_EGRESS_ALLOW: '127.0.0.0/8', TANDEM_WEBHOOK_RETRY_BASE_MS: '1' }, { ownDatabase: true })
      // Phase "Later" answers later (202, then POST result); every other phase answers at once.
      agent = await startAgentServer((d) => (d.body.phase.phaseName === 'Later' ? { status: 202 } : { status: 200, body: { output: { text: `done: ${d.body.phase.phaseName}` } } }))
      agentId = await createAgent(app, { endpointUrl: agent.url })
      streamId = await createStream(app)
    })
    after(async () => {
      await app.close()
      await agent.close()
    })

    const deliveriesOf = (runId: string) => agent.deliveries.filter((d) => d.body.run.id === runId)

    it('the run\'s trace follows every task delivery — late answers and decisions included — and its events\' webhook deliveries', async () => {
      const receiver = await startReceiver()
      const stream = await createStream(app, 'Traced')
      try {
        const cycleId = await createCycle(app, stream, [{ agentId, name: 'Later' }, { agentId, autoAdvance: false, name: 'Reply' }])
        const hook = await send(app, 'POST', '/api/webhooks', { url: receiver.url, events: ['*'], streamId: stream })
        assert.equal(hook.statusCode, 201, hook.body)
        const started = await send(app, 'POST', `/api/cycles/streams/${stream}/cycles/${cycleId}/runs`, { input: {} }, traceparent(TRACE))
        assert.equal(started.statusCode, 201, started.body)
        const runId = started.json().id
        assert.equal(started.headers.traceparent, undefined, 'nothing is echoed')

        // The first phase: the agent takes it (202) and answers later, from another trace of its own.
        const [later] = await waitFor(() => (deliveriesOf(runId).length >= 1 ? deliveriesOf(runId) : undefined), 15000, 'the first delivery')
        const first = parts(later!.headers.traceparent)
        assert.deepEqual([first.traceId, first.flags], [TRACE, '01'])
        assert.notEqual(first.spanId, SPAN, 'a span of our own, not the caller\'s')
        const answer = await send(app, 'POST', `/api/tasks/${later!.body.task.id}/result`, { output: { text: 'later' } }, {
          authorization: `Bearer ${later!.body.result.token}`, ...traceparent('a'.repeat(32)),
        })
        assert.equal(answer.statusCode, 200, answer.body)

        // The next phase, dispatched by the worker: the run's trace, not the answer's.
        const waiting = await runIn(app, runId, 'waiting')
        const reply = parts(deliveriesOf(runId)[1]?.headers.traceparent)
        assert.equal(reply.traceId, TRACE)
        assert.ok(![SPAN, first.spanId].includes(reply.spanId), 'each task has a span of its own')

        // An operator's revision (sent from yet another trace) continues the run's trace too.
        const phase = waiting.phases[1].id
        const revise = await send(app, 'POST', `/api/runs/${runId}/phases/${phase}/decision`, { decision: 'revise', note: 'shorter' }, traceparent('b'.repeat(32)))
        assert.equal(revise.statusCode, 200, revise.body)
        await runIn(app, runId, 'waiting')
        const revised = parts(deliveriesOf(runId)[2]?.headers.traceparent)
        assert.equal(revised.traceId, TRACE)
        assert.ok(![SPAN, first.spanId, reply.spanId].includes(revised.spanId))
        assert.equal((await send(app, 'POST', `/api/runs/${runId}/phases/${phase}/decision`, { decision: 'approve' })).statusCode, 200)
        await runIn(app, runId, 'succeeded')

        // Every event of the run (its changes and the agents' messages) reached the receiver in the run's trace.
        const events = await waitFor(async () => {
          const log = (await send(app, 'GET', `/api/webhooks/${hook.json().id}/deliveries?limit=100`)).json().data as Array<{ status: string }>
          const succeeded = log.some((d) => d.status === 'pending') ? 0 : log.length
          return succeeded > 0 && receiver.received.length >= succeeded ? receiver.received : undefined
        }, 15000, 'the webhook deliveries of the run\'s events')
        const types = new Set(events.map((r) => JSON.parse(r.body).type))
        assert.deepEqual([...types].sort(), ['message.created', 'run.created', 'run.updated'])
        assert.ok(events.some((r) => JSON.parse(r.body).data.status === 'succeeded'))
        const spans = new Set<string>()
        for (const request of events) {
          const event = JSON.parse(request.body)
          const sent = parts(request.headers.traceparent)
          assert.equal(sent.traceId, TRACE, `${event.type} ${event.id}`)
          assert.equal(sent.flags, '01')
          spans.add(sent.spanId)
        }
        assert.equal(spans.size, events.length, 'each webhook delivery is a span of its own')
        assert.ok(!spans.has(SPAN))
      } finally {
        await receiver.close()
      }
    })

    it('a trigger puts the runs it starts in its trace; the sampled flag is kept', async () => {
      const trace = 'c'.repeat(32)
      await createCycle(app, streamId, [{ agentId, name: 'One' }], 'traced-trigger')
      await createCycle(app, streamId, [{ agentId, name: 'Two' }], 'traced-trigger')
      const fired = await send(app, 'POST', `/api/streams/${streamId}/triggers/traced-trigger`, { input: {} }, traceparent(trace, SPAN, '00'))
      assert.equal(fired.statusCode, 202, fired.body)
      const runs = fired.json().runs as Array<{ id: string }>
      assert.equal(runs.length, 2)
      for (const run of runs) {
        await runIn(app, run.id, 'succeeded')
        const sent = parts(deliveriesOf(run.id)[0]?.headers.traceparent)
        assert.deepEqual([sent.traceId, sent.flags], [trace, '00'])
      }
    })

    it('an invalid or absent traceparent starts a new trace, and an invalid one is never passed on', async () => {
      const cycleId = await createCycle(app, streamId, [{ agentId, name: 'Fresh' }], 'fresh')
      const invalid = [
        `ff-${TRACE}-${SPAN}-01`,
        `00-${TRACE}-${SPAN}-01-extra`,
        `00-${'0'.repeat(32)}-${SPAN}-01`,
        `00-${TRACE}-${'0'.repeat(16)}-01`,
        `00-${TRACE}-${SPAN}`,
        'garbage',
      ]
      const traces = new Set<string>()
      for (const header of [...invalid, undefined]) {
        const res = await send(app, 'POST', `/api/cycles/streams/${streamId}/cycles/${cycleId}/runs`, { input: {} }, header === undefined ? {} : { traceparent: header })
        assert.equal(res.statusCode, 201, res.body)
        await runIn(app, res.json().id, 'succeeded')
        const delivered = deliveriesOf(res.json().id)[0]!
        assert.notEqual(delivered.headers.traceparent, header)
        const sent = parts(delivered.headers.traceparent)
        assert.notEqual(sent.traceId, TRACE, String(header))
        assert.notEqual(sent.spanId, SPAN, String(header))
        traces.add(sent.traceId)
      }
      assert.equal(traces.size, invalid.length + 1, 'each request starts its own trace')
    })

    it('a person\'s message is delivered to webhooks in the trace of the request that posted it', async () => {
      const receiver = await startReceiver()
      const stream = await createStream(app, 'Chat')
      try {
        assert.equal((await send(app, 'POST', '/api/webhooks', { url: receiver.url, events: ['message.created'], streamId: stream })).statusCode, 201)
        const trace = 'd'.repeat(32)
        const content = { blocks: [{ type: 'rich_text', elements: [{ type: 'paragraph', children: [{ type: 'text', text: 'hello' }] }] }] }
        assert.equal((await send(app, 'POST', `/api/chat/streams/${stream}/messages`, { content }, traceparent(trace))).statusCode, 201)
        const [request] = await receiver.waitFor(1)
        const sent = parts(request?.headers.traceparent)
        assert.equal(sent.traceId, trace)
        assert.notEqual(sent.spanId, SPAN)
      } finally {
        await receiver.close()
      }
    })
  })
}
