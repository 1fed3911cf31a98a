// Usage and cost (docs/streaming-and-usage.md) on both databases, through the AI SDK and the Mistral Agents API
// against local fakes: each attempt's reported tokens are kept on its task, a phase sums its attempts (a revise
// makes a second one), a run sums its phases, `config.pricing` gives costUsd; a streamed answer cut mid-delta is
// retried into the same message; the Mistral Agents API streams too.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import type { AddressInfo } from 'node:net'
import { build, dialects, send } from '../helpers.js'
import { startAnthropicFake } from '../fakes/vendors/anthropic.js'
import { startMistralFake } from '../fakes/vendors/mistral.js'
import { SECRET } from '../fakes/vendors/context.js'
import { openEventStream } from '../events/sse-client.js'
import { waitFor } from '../runs/agent-server.js'
import { createAgent, createCycle, createStream, getRun, runIn, startRun } from '../runs/setup.js'

for (const dialect of dialects()) {
  describe(`usage and cost (${dialect})`, () => {
    let app: FastifyInstance
    let base: string
    let anthropic: Awaited<ReturnType<typeof startAnthropicFake>>
    let mistral: Awaited<ReturnType<typeof startMistralFake>>
    let credentialId: string

    before(async () => {
      app = await build(dialect, { TANDEM_WORKERS: '4', TANDEM_DISPATCH_ATTEMPTS: '3', TANDEM_EGRESS_ALLOW: '127.0.0.0/8' }, { ownDatabase: true })
      await app.listen({ port: 0, host: '127.0.0.1' })
      base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
      anthropic = await startAnthropicFake(SECRET)
      mistral = await startMistralFake(SECRET)
      const res = await send(app, 'POST', '/api/credentials', { name: 'vendor key', secret: SECRET })
      credentialId = res.json().id
    })
    after(async () => {
      await app.close()
      await anthropic.close()
      await mistral.close()
    })

    it('a phase sums its attempts, a run its phases; costUsd from config.pricing; each attempt on its task', async () => {
      const claude = await createAgent(app, {
        providerType: 'claude', authMode: 'api_key', credentialId, endpointUrl: anthropic.base,
        config: { model: 'claude-test-1', pricing: { inputPerMTok: 3, outputPerMTok: 15 } },
      })
      const chat = await createAgent(app, {
        providerType: 'mistral', authMode: 'api_key', credentialId, endpointUrl: mistral.base,
        config: { model: 'mistral-test-1', pricing: { inputPerMTok: 2, outputPerMTok: 6 } },
      })
      const streamId = await createStream(app)
      const cycleId = await createCycle(app, streamId, [{ agentId: claude, autoAdvance: false }, { agentId: chat }])
      anthropic.steps.set({ text: 'first draft', usage: { input: 1000, output: 100 } }, { text: 'second draft', usage: { input: 2000, output: 200 } })
      mistral.steps.set({ text: 'checked', usage: { input: 500, output: 50 } })
      const run = await startRun(app, streamId, cycleId)
      const waiting = await runIn(app, run.id, 'waiting')
      assert.deepEqual(waiting.phases[0].usage, { inputTokens: 1000, outputTokens: 100 })
      assert.equal(waiting.phases[0].costUsd, 0.0045)
      assert.equal(waiting.phases[1].usage, null)
      const phase = waiting.phases[0].id
      const revise = await send(app, 'POST', `/api/runs/${run.id}/phases/${phase}/decision`, { decision: 'revise', note: 'shorter' })
      assert.equal(revise.statusCode, 200, revise.body)
      await waitFor(async () => ((await getRun(app, run.id)).phases[0].attempts === 2 && (await getRun(app, run.id)).status === 'waiting') || undefined, 15000, 'the second attempt')
      const approve = await send(app, 'POST', `/api/runs/${run.id}/phases/${phase}/decision`, { decision: 'approve' })
      assert.equal(approve.statusCode, 200, approve.body)
      const done = await runIn(app, run.id, 'succeeded')
      assert.deepEqual(done.phases[0].usage, { inputTokens: 3000, outputTokens: 300 })
      assert.equal(done.phases[0].costUsd, 0.0135)
      assert.deepEqual(done.phases[1].usage, { inputTokens: 500, outputTokens: 50 })
      assert.equal(done.phases[1].costUsd, 0.0013)
      assert.deepEqual(done.usage, { inputTokens: 3500, outputTokens: 350 })
      assert.equal(done.costUsd, 0.0148)
      const tasks = await app.database.db.selectFrom('run_tasks').select(['attempt', 'usage']).where('run_id', '=', run.id).orderBy('created_at').execute()
      assert.deepEqual(tasks.map((t) => JSON.parse(t.usage as string)), [
        { inputTokens: 1000, outputTokens: 100 },
        { inputTokens: 2000, outputTokens: 200 },
        { inputTokens: 500, outputTokens: 50 },
      ])
      // The summary in run.updated carries them too.
      const log = (await send(app, 'GET', `/api/streams/${streamId}/events`, undefined, { accept: 'application/json' })).json().data
      const last = log.filter((e: any) => e.type === 'run.updated').at(-1)
      assert.deepEqual(last.data.usage, { inputTokens: 3500, outputTokens: 350 })
      const metrics = (await send(app, 'GET', '/metrics')).body
      assert.match(metrics, /tandem_agent_tokens_total\{provider="mistral",direction="input"\} 500/)
    })

    it('a streamed Claude answer cut mid-delta is retried into the same message (reset), usage of the answer that counted', async () => {
      const agentId = await createAgent(app, {
        providerType: 'claude', authMode: 'api_key', credentialId, endpointUrl: anthropic.base,
        capabilities: { streaming: true, tools: [] }, config: { model: 'claude-test-1' },
      })
      anthropic.steps.set(
        { deltas: ['one ', 'two ', 'three'], gapMs: 50, cutAfter: 2 },
        { deltas: ['uno ', 'dos'], gapMs: 50, usage: { input: 11, output: 22 } },
      )
      const streamId = await createStream(app)
      const events = await openEventStream(`${base}/api/streams/${streamId}/events`)
      const run = await startRun(app, streamId, await createCycle(app, streamId, [{ agentId }]))
      const done = await runIn(app, run.id, ['succeeded', 'failed'], 20000)
      assert.equal(done.status, 'succeeded', JSON.stringify(done.phases[0]))
      await waitFor(() => events.messages.find((m) => m.event === 'message.completed'), 5000, 'message.completed')
      events.close()
      const deltas = events.messages.filter((m) => m.event === 'message.delta').map((m) => JSON.parse(m.data as string))
      assert.ok(deltas.some((d) => d.text.includes('one')), 'the first delivery streamed')
      const reset = deltas.find((d) => d.reset === true)
      assert.ok(reset, 'the retry began with a reset')
      assert.equal(reset.offset, 0)
      const messages = (await send(app, 'GET', `/api/chat/streams/${streamId}/messages`)).json().data
      assert.equal(messages.length, 1)
      assert.equal(messages[0].text, 'uno dos')
      assert.equal(done.phases[0].output.messageId, messages[0].id)
      assert.deepEqual(done.usage, { inputTokens: 11, outputTokens: 22 })
      anthropic.steps.set({ text: 'It is a bug.' })
    })

    it('token counts that are not whole numbers from 0 are dropped: no negative cost, no infinite one, nothing counted', async () => {
      const claude = await createAgent(app, {
        providerType: 'claude', authMode: 'api_key', credentialId, endpointUrl: anthropic.base,
        config: { model: 'claude-test-1', pricing: { inputPerMTok: 3, outputPerMTok: 15 } },
      })
      const chat = await createAgent(app, {
        providerType: 'mistral', authMode: 'api_key', credentialId, endpointUrl: mistral.base,
        config: { model: 'mistral-test-1', pricing: { inputPerMTok: 2, outputPerMTok: 6 } },
      })
      const streamId = await createStream(app)
      const cycleId = await createCycle(app, streamId, [{ agentId: claude }, { agentId: chat }])
      anthropic.steps.set({ text: 'negative', usage: { input: -10000000, output: 100 } })
      mistral.steps.set({ text: 'huge', usage: { input: 1e308, output: 1 } })
      const metricsBefore = (await send(app, 'GET', '/metrics')).body
      const done = await runIn(app, (await startRun(app, streamId, cycleId)).id, 'succeeded')
      assert.equal(done.phases[0].usage, null)
      assert.equal(done.phases[1].usage, null)
      assert.ok(!(done.costUsd < 0) && !(done.phases[0].costUsd < 0), `no negative cost: ${JSON.stringify(done.costUsd)}`)
      assert.equal(done.usage, null)
      assert.equal((await send(app, 'GET', '/metrics')).body.match(/tandem_agent_tokens_total\{[^}]*\} .*/g)?.join('\n'), metricsBefore.match(/tandem_agent_tokens_total\{[^}]*\} .*/g)?.join('\n'), 'nothing counted')
    })

    it('the Mistral Agents API streams (stream: true) and reports usage', async () => {
      const agentId = await createAgent(app, {
        providerType: 'mistral', authMode: 'api_key', credentialId, endpointUrl: mistral.base,
        capabilities: { streaming: true, tools: [] }, config: { agentId: 'ag_1' },
      })
      mistral.steps.set({ deltas: ['Ciao ', 'a tutti'], gapMs: 40, usage: { input: 9, output: 4 } })
      const streamId = await createStream(app)
      const events = await openEventStream(`${base}/api/streams/${streamId}/events`)
      const run = await startRun(app, streamId, await createCycle(app, streamId, [{ agentId }]))
      const done = await runIn(app, run.id, 'succeeded')
      await waitFor(() => events.messages.find((m) => m.event === 'message.completed'), 5000, 'message.completed')
      events.close()
      const request = mistral.requests.filter((r) => r.path.endsWith('/agents/completions')).at(-1)!
      assert.equal(request.body.stream, true)
      assert.equal(request.body.agent_id, 'ag_1')
      const text = events.messages.filter((m) => m.event === 'message.delta').map((m) => JSON.parse(m.data as string).text).join('')
      assert.equal(text, 'Ciao a tutti')
      assert.equal(done.phases[0].output.text, 'Ciao a tutti')
      assert.deepEqual(done.usage, { inputTokens: 9, outputTokens: 4 })
    })
  })
}
