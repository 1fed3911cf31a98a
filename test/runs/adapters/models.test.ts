// The Claude and Mistral adapters through the real AI SDK clients (and plain HTTP for Mistral's Agents API),
// against local servers speaking each vendor's API: what they receive, and how every failure maps.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { Adapter, AgentTarget } from '../../../src/runs/adapters/adapter.js'
import { claudeAdapter } from '../../../src/runs/adapters/claude.js'
import { mistralAdapter } from '../../../src/runs/adapters/mistral.js'
import { startAnthropicFake } from '../../fakes/vendors/anthropic.js'
import { adapterContext, agentTarget, SECRET, taskPayload } from '../../fakes/vendors/context.js'
import { startMistralFake } from '../../fakes/vendors/mistral.js'

type Fake = Awaited<ReturnType<typeof startAnthropicFake>>

interface Case {
  label: string
  adapter: Adapter
  start: () => Promise<Fake>
  config: Record<string, unknown>
  path: string
  /** Where the fake finds the system prompt and the user prompt of a request. */
  read: (body: any) => { system: string | undefined; user: string; model: string | undefined }
  keyHeader: (headers: Record<string, unknown>) => unknown
}

const cases: Case[] = [
  {
    label: 'claude',
    adapter: claudeAdapter,
    start: () => startAnthropicFake(SECRET),
    config: { model: 'claude-test-1' },
    path: '/v1/messages',
    read: (body) => ({ system: body.system?.map((s: any) => s.text).join('') ?? body.system, user: body.messages[0].content.map((c: any) => c.text).join(''), model: body.model }),
    keyHeader: (h) => h['x-api-key'],
  },
  {
    label: 'mistral chat',
    adapter: mistralAdapter,
    start: () => startMistralFake(SECRET),
    config: { model: 'mistral-test-1' },
    path: '/v1/chat/completions',
    read: (body) => ({
      system: body.messages.find((m: any) => m.role === 'system')?.content,
      user: [body.messages.find((m: any) => m.role === 'user').content].flat().map((c: any) => (typeof c === 'string' ? c : c.text)).join(''),
      model: body.model,
    }),
    keyHeader: (h) => h.authorization,
  },
  {
    label: 'mistral agent',
    adapter: mistralAdapter,
    start: () => startMistralFake(SECRET),
    config: { agentId: 'ag_0123' },
    path: '/v1/agents/completions',
    read: (body) => ({ system: undefined, user: body.messages[0].content, model: body.agent_id }),
    keyHeader: (h) => h.authorization,
  },
]

for (const c of cases) {
  describe(`${c.label} adapter`, () => {
    let fake: Fake
    let agent: AgentTarget
    before(async () => {
      fake = await c.start()
      agent = agentTarget(c.adapter.providerType, fake.base, { config: c.config })
    })
    after(() => fake.close())

    it('answers with the model text and sends model, system prompt, key and task', async () => {
      fake.steps.set({ text: 'It is a bug.', usage: { input: 12, output: 34 } })
      const before = fake.requests.length
      const outcome = await c.adapter.deliver(taskPayload(), agent, adapterContext())
      // The tokens the vendor reports come back with the answer (docs/streaming-and-usage.md).
      assert.deepEqual(outcome, { kind: 'answered', output: { text: 'It is a bug.' }, usage: { inputTokens: 12, outputTokens: 34 } })
      const request = fake.requests[before]!
      assert.equal(request.path, c.path)
      assert.equal(fake.requests.length, before + 1)
      const { system, user, model } = c.read(request.body)
      assert.equal(model, c.label === 'mistral agent' ? 'ag_0123' : c.config.model)
      if (c.label === 'mistral agent') assert.match(user, /You are the triage agent/)
      else assert.equal(system, 'You are the triage agent. Answer in one paragraph.')
      assert.match(user, /Classify the ticket\./)
      assert.match(user, /Say bug or question\./)
      assert.match(user, /T-42/)
      assert.match(user, /The customer cannot log in\./)
      assert.match(user, /Please hurry/)
      assert.doesNotMatch(user, /feedback/i)
      assert.match(String(c.keyHeader(request.headers)), new RegExp(SECRET))
      assert.equal(request.headers.traceparent, '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01')
    })

    it('sends the operator feedback of a revision', async () => {
      fake.steps.set({ text: 'It is a question, then.' })
      const outcome = await c.adapter.deliver(taskPayload({ feedback: 'Look again: the login works.', attempt: 2 }), agent, adapterContext())
      assert.deepEqual(outcome, { kind: 'answered', output: { text: 'It is a question, then.' }, usage: { inputTokens: 10, outputTokens: 10 } })
      const { user } = c.read(fake.requests.at(-1)!.body)
      assert.match(user, /Operator feedback on your previous answer \(attempt 1\)/)
      assert.match(user, /Look again: the login works\./)
    })

    it('a wrong key is agent-rejected, without the key in the detail', async () => {
      const wrong = 'sk-wrong-key-123456'
      const outcome = await c.adapter.deliver(taskPayload(), { ...agent, secret: wrong }, adapterContext())
      assert.equal(outcome.kind, 'failed')
      assert.equal(outcome.kind === 'failed' && outcome.code, 'agent-rejected')
      assert.doesNotMatch(JSON.stringify(outcome), /sk-wrong-key|sk-test/)
    })

    it('a rate limit is a retry honouring Retry-After, and the next try succeeds', async () => {
      fake.steps.set({ status: 429, retryAfter: '3' }, { text: 'Second time lucky.' })
      const first = await c.adapter.deliver(taskPayload(), agent, adapterContext())
      assert.equal(first.kind, 'retry')
      assert.equal(first.kind === 'retry' && first.retryAfterMs, 3000)
      const second = await c.adapter.deliver(taskPayload(), agent, adapterContext())
      assert.deepEqual(second, { kind: 'answered', output: { text: 'Second time lucky.' }, usage: { inputTokens: 10, outputTokens: 10 } })
    })

    it('a 5xx is a retry', async () => {
      fake.steps.set({ status: 503 })
      const outcome = await c.adapter.deliver(taskPayload(), agent, adapterContext())
      assert.equal(outcome.kind, 'retry')
    })

    it('a 400 is agent-rejected', async () => {
      fake.steps.set({ status: 400 })
      const outcome = await c.adapter.deliver(taskPayload(), agent, adapterContext())
      assert.equal(outcome.kind === 'failed' && outcome.code, 'agent-rejected')
    })

    it('a malformed answer is agent-failed', async () => {
      fake.steps.set({ raw: '{"this is": "not a message"' })
      const outcome = await c.adapter.deliver(taskPayload(), agent, adapterContext())
      assert.equal(outcome.kind === 'failed' && outcome.code, 'agent-failed')
      fake.steps.set({ raw: '{"id": "x", "unexpected": true}' })
      const shapeless = await c.adapter.deliver(taskPayload(), agent, adapterContext())
      assert.equal(shapeless.kind === 'failed' && shapeless.code, 'agent-failed')
    })

    it('an empty answer is agent-failed', async () => {
      fake.steps.set({ text: '  ' })
      const outcome = await c.adapter.deliver(taskPayload(), agent, adapterContext())
      assert.equal(outcome.kind === 'failed' && outcome.code, 'agent-failed')
    })

    it('an answer slower than the dispatch time-out is a retry that says so', async () => {
      fake.steps.set({ text: 'too late', delayMs: 2000 })
      const outcome = await c.adapter.deliver(taskPayload(), agent, adapterContext(200))
      assert.equal(outcome.kind, 'retry')
      assert.match(outcome.kind === 'retry' ? outcome.detail : '', /within 200 ms/)
    })

    it('a closed port is a retry (network error)', async () => {
      const outcome = await c.adapter.deliver(taskPayload(), { ...agent, endpointUrl: 'http://127.0.0.1:1/v1' }, adapterContext())
      assert.equal(outcome.kind, 'retry')
    })
  })
}

describe('model adapters: unavailable', () => {
  const agent = (providerType: string, fields: Partial<AgentTarget>) => agentTarget(providerType, 'http://127.0.0.1:1', fields)
  it('claude needs config.model (the credential is the authMode rules\' check: auth-mode.test.ts)', () => {
    assert.match(claudeAdapter.unavailable(agent('claude', { config: {} })) ?? '', /config\.model/)
    assert.match(claudeAdapter.unavailable(agent('claude', { config: { model: '' } })) ?? '', /config\.model/)
    assert.match(claudeAdapter.unavailable(agent('claude', { config: { model: 'm', maxTokens: 0 } })) ?? '', /maxTokens/)
    assert.equal(claudeAdapter.unavailable(agent('claude', { config: { model: 'm', maxTokens: 1 } })), null)
  })
  it('mistral needs config.model or config.agentId (the credential: auth-mode.test.ts)', () => {
    assert.match(mistralAdapter.unavailable(agent('mistral', { config: {} })) ?? '', /config\.model.*config\.agentId/)
    assert.equal(mistralAdapter.unavailable(agent('mistral', { config: { agentId: 'a' } })), null)
    assert.equal(mistralAdapter.unavailable(agent('mistral', { config: { model: 'm' } })), null)
  })
})
