// `chat` spans (docs/insights.md, "Traces"): with an OTLP endpoint set, every model call of Tandem's own loop
// reaches a local OTLP/HTTP receiver as a CLIENT span `chat {model}` under the task's invoke_agent, with the
// GenAI attributes (operation, provider, model, the step's tokens, finish reason) and no prompt, answer or tool
// text; a Claude agent with a tool makes two (the call, then the answer). And a request acting on a run keeps
// its own trace: the wait its decision ends links to the request's span.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { randomBytes } from 'node:crypto'
import { build, dialects, send } from '../helpers.js'
import { waitFor } from '../runs/agent-server.js'
import { createAgent, createCycle, createStream, runIn, startRun } from '../runs/setup.js'
import { startAnthropicToolFake, type ToolModelFake } from '../fakes/vendors/tool-models.js'
import { attr, startOtlpReceiver, type OtlpReceiver } from './otlp.js'


for (const dialect of dialects()) {
  describe(`chat spans (${dialect})`, () => {
    let app: FastifyInstance
    let otlp: OtlpReceiver
    let model: ToolModelFake
    const spans = () => otlp.spans()
    before(async () => {
      otlp = await startOtlpReceiver()
      model = await startAnthropicToolFake()
      app = await build(dialect, {
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '10',
        TANDEM_WORKERS: '2', TANDEM_EGRESS_ALLOW: '127.0.0.0/8', TANDEM_DISPATCH_ATTEMPTS: '1',
      })
    })
    after(async () => {
      await app.close()
      await model.close()
      otlp.server.close()
    })

    it('a chat span per model call under invoke_agent, with model, provider and the step\'s tokens; no text', async () => {
      model.turns.set({ text: 'Let me read the thread.', calls: [{ name: 'tandem__read_messages', input: {} }] }, { text: 'The secret plan is fine.' })
      const agentId = await createAgent(app, {
        providerType: 'claude', authMode: 'none', endpointUrl: model.base,
        config: { model: 'claude-test' }, capabilities: { streaming: false, tools: ['tandem.read_messages'] },
      })
      const streamId = await createStream(app)
      const cycleId = await createCycle(app, streamId, [{ agentId }])
      const run = await startRun(app, streamId, cycleId)
      await runIn(app, run.id, 'succeeded')
      const agentSpan = await waitFor(() => spans().find((s) => s.name.startsWith('invoke_agent') && attr(s, 'tandem.run.id') === run.id), 10000, 'invoke_agent')
      const chats = await waitFor(() => {
        const found = spans().filter((s) => s.name.startsWith('chat') && attr(s, 'tandem.run.id') === run.id)
        return found.length >= 2 ? found : undefined
      }, 10000, 'two chat spans')
      assert.equal(chats.length, 2)
      for (const chat of chats) {
        assert.equal(chat.name, 'chat claude-test')
        assert.equal(chat.kind, 3, 'CLIENT')
        assert.equal(chat.traceId, agentSpan.traceId)
        assert.equal(chat.parentSpanId, agentSpan.spanId, 'under the task\'s invoke_agent')
        assert.equal(attr(chat, 'gen_ai.operation.name'), 'chat')
        assert.equal(attr(chat, 'gen_ai.provider.name'), 'anthropic')
        assert.equal(attr(chat, 'gen_ai.request.model'), 'claude-test')
        assert.equal(attr(chat, 'gen_ai.usage.input_tokens'), 25)
        assert.equal(attr(chat, 'gen_ai.usage.output_tokens'), 15)
        assert.equal(attr(chat, 'tandem.task.id'), attr(agentSpan, 'tandem.task.id'))
      }
      assert.deepEqual(chats.map((c) => attr(c, 'gen_ai.response.finish_reasons')).sort(), [['stop'], ['tool-calls']])
      const text = JSON.stringify(spans())
      for (const secret of ['Let me read', 'secret plan', 'read the thread']) assert.ok(!text.includes(secret), `no message text: ${secret}`)
    })

    it('a decision keeps its request\'s trace; the wait it ends links to that request\'s span', async () => {
      model.turns.set({ text: 'A draft.' })
      // The fake model streams: a streaming agent (answered through streamText).
      const agentId = await createAgent(app, { providerType: 'claude', authMode: 'none', endpointUrl: model.base, config: { model: 'claude-test' }, capabilities: { streaming: true, tools: [] } })
      const streamId = await createStream(app)
      const cycleId = await createCycle(app, streamId, [{ agentId, autoAdvance: false }])
      const run = await startRun(app, streamId, cycleId)
      const waiting = await runIn(app, run.id, 'waiting')
      const caller = { traceId: randomBytes(16).toString('hex'), spanId: randomBytes(8).toString('hex') }
      const res = await send(app, 'POST', `/api/runs/${run.id}/phases/${waiting.phases[0].id}/decision`, { decision: 'approve' }, { traceparent: `00-${caller.traceId}-${caller.spanId}-01` })
      assert.equal(res.statusCode, 200, res.body)
      const wait = await waitFor(() => spans().find((s) => s.name === 'tandem.wait decision' && attr(s, 'tandem.run.id') === run.id), 10000, 'the wait span')
      const request = await waitFor(() => spans().find((s) => s.kind === 2 && s.traceId === caller.traceId && s.parentSpanId === caller.spanId), 10000, 'the decision request\'s span')
      assert.notEqual(wait.traceId, caller.traceId, 'the wait stays in the run\'s trace')
      assert.deepEqual((wait.links ?? []).map((l) => [l.traceId, l.spanId]), [[caller.traceId, request.spanId]])
      // The run's own spans from requests in its trace or from jobs carry no link.
      const agentSpan = spans().find((s) => s.name.startsWith('invoke_agent') && attr(s, 'tandem.run.id') === run.id)!
      assert.deepEqual(agentSpan.links ?? [], [])
    })
  })
}
