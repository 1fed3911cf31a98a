// runToolLoop on its own (no database), through the AI SDK's Anthropic and Mistral providers against local
// servers that stream tool use: text deltas reach onDelta as they stream, steps' texts are joined, usage sums
// every step's tokens, the stored state resumes, and a model error maps to a delivery outcome.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { lookup } from 'node:dns'
import { request } from 'undici'
import { createAnthropic } from '@ai-sdk/anthropic'
import { createMistral } from '@ai-sdk/mistral'
import type { AdapterContext } from '../../src/runs/adapters/adapter.js'
import { runToolLoop, type LoopState, type RequestedCall, type ToolLoopHost } from '../../src/runs/adapters/tool-loop.js'
import type { ToolDefinition } from '../../src/tools/definitions.js'
import { startAnthropicToolFake, startMistralToolFake, type ToolModelFake } from '../fakes/vendors/tool-models.js'

const echo: ToolDefinition = { name: 'files.echo', description: 'Says it back.', inputSchema: { type: 'object', properties: { text: { type: 'string' } } }, source: { kind: 'tandem' } }

function host(stored: { state: LoopState } | null = null): ToolLoopHost & { steps: RequestedCall[][] } {
  const steps: RequestedCall[][] = []
  return {
    steps,
    tools: [echo],
    maxSteps: 5,
    noteWarnings: async () => {},
    resume: async () => (stored ? { state: stored.state, results: [{ toolCallId: 'toolu_old', vendorName: 'files__echo', ok: true, text: 'echo: before' }] } : null),
    step: async (_state, calls) => {
      steps.push(calls)
      return { results: calls.map((c) => ({ toolCallId: c.toolCallId, vendorName: c.vendorName, ok: true, text: `echo: ${(c.input as { text: string }).text}` })) }
    },
  }
}

const context = (deltas: string[], tools: ToolLoopHost): AdapterContext => ({ fetch, request, lookup, signal: AbortSignal.timeout(10000), timeoutMs: 10000, onDelta: (text) => deltas.push(text), tools })

describe('runToolLoop', () => {
  let anthropic: ToolModelFake
  let mistral: ToolModelFake
  before(async () => {
    anthropic = await startAnthropicToolFake()
    mistral = await startMistralToolFake()
  })
  after(async () => {
    await anthropic.close()
    await mistral.close()
  })

  const models = () => ({
    claude: createAnthropic({ baseURL: anthropic.base, apiKey: 'k' })('claude-test'),
    mistral: createMistral({ baseURL: mistral.base, apiKey: 'k' })('mistral-test'),
  })

  for (const vendor of ['claude', 'mistral'] as const) {
    it(`${vendor}: streams deltas, joins the steps' texts and sums usage over steps`, async () => {
      const fake = vendor === 'claude' ? anthropic : mistral
      fake.turns.set({ text: 'Checking.', calls: [{ name: 'files__echo', input: { text: 'a' } }] }, { text: 'All good.' })
      const deltas: string[] = []
      const tools = host()
      const outcome = await runToolLoop(vendor, models()[vendor], { system: 'sys', user: 'do it' }, context(deltas, tools), { secret: null })
      assert.equal(outcome.kind, 'answered')
      if (outcome.kind !== 'answered') return
      assert.deepEqual(outcome.output, { text: 'Checking.\n\nAll good.' })
      assert.deepEqual(outcome.usage, { inputTokens: 50, outputTokens: 30 })
      assert.equal(deltas.join(''), 'Checking.\n\nAll good.')
      assert.ok(deltas.length >= 4, 'the text came in pieces')
      assert.deepEqual(tools.steps.map((s) => s.map((c) => [c.vendorName, c.tool?.name, c.input])), [[['files__echo', 'files.echo', { text: 'a' }]]])
    })
  }

  it('resumes from a stored state: the results go to the model, the usage and text carry on', async () => {
    anthropic.turns.set({ text: 'Resumed.' })
    const before = anthropic.requests.length
    const state: LoopState = {
      messages: [{ role: 'user', content: 'do it' }, { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'toolu_old', toolName: 'files__echo', input: { text: 'before' } }] }],
      text: 'Earlier.', usage: { inputTokens: 7, outputTokens: 3 }, step: 1,
    }
    const outcome = await runToolLoop('claude', models().claude, { system: undefined, user: 'do it' }, context([], host({ state })), { secret: null })
    assert.deepEqual(outcome, { kind: 'answered', output: { text: 'Earlier.\n\nResumed.' }, usage: { inputTokens: 32, outputTokens: 18 } })
    const sent = anthropic.requests.slice(before)[0]!.body
    assert.equal(sent.messages.at(-1).content[0].type, 'tool_result')
    assert.equal(sent.messages.at(-1).content[0].tool_use_id, 'toolu_old')
  })

  it('a vendor error is a delivery outcome, not a throw', async () => {
    mistral.turns.set({ status: 503 })
    const outcome = await runToolLoop('Mistral', models().mistral, { system: undefined, user: 'x' }, context([], host()), { secret: null })
    assert.equal(outcome.kind, 'retry')
    mistral.turns.set({ status: 401 })
    assert.equal((await runToolLoop('Mistral', models().mistral, { system: undefined, user: 'x' }, context([], host()), { secret: null })).kind, 'failed')
  })
})
