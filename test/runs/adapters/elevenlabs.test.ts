// The ElevenLabs adapter over a real WebSocket (`ws`) against a local Conversational AI service: signed URL
// with xi-api-key, text-only conversation, ping/pong, the greeting skipped, and every failure mapped.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { AgentTarget } from '../../../src/runs/adapters/adapter.js'
import { elevenLabsAdapter, GREETING_WAIT_MS } from '../../../src/runs/adapters/elevenlabs.js'
import { adapterContext, agentTarget, SECRET, taskPayload } from '../../fakes/vendors/context.js'
import { startElevenLabsFake } from '../../fakes/vendors/elevenlabs.js'
import { waitFor } from '../../wait.js'

describe('elevenlabs adapter', () => {
  let fake: Awaited<ReturnType<typeof startElevenLabsFake>>
  let agent: AgentTarget
  before(async () => {
    fake = await startElevenLabsFake(SECRET)
    agent = agentTarget('elevenlabs', fake.url, { config: { agentId: 'agent_7' } })
  })
  after(() => fake.close())

  it('gets a signed URL with xi-api-key, talks text-only, answers pings and takes the answer after the greeting', async () => {
    fake.steps.set({ text: 'It is a bug.' })
    const outcome = await elevenLabsAdapter.deliver(taskPayload(), agent, adapterContext())
    assert.deepEqual(outcome, { kind: 'answered', output: { text: 'It is a bug.' } })
    const signed = fake.requests.at(-1)!
    assert.equal(signed.path, '/v1/convai/conversation/get-signed-url')
    assert.equal(signed.url.searchParams.get('agent_id'), 'agent_7')
    assert.equal(signed.headers['xi-api-key'], SECRET)
    assert.match(fake.connections.at(-1)!.url, /conversation_signature=sig-1/)
    const messages = fake.received.at(-1)!
    assert.deepEqual(messages[0], { type: 'conversation_initiation_client_data', conversation_config_override: { conversation: { text_only: true } } })
    assert.equal(messages[1].type, 'user_message')
    assert.match(messages[1].text, /You are the triage agent/)
    assert.match(messages[1].text, /Classify the ticket\./)
    assert.deepEqual(messages[2], { type: 'pong', event_id: 1 })
  })

  it('with an agent that does not greet, sends the task once the greeting wait has passed', async () => {
    fake.steps.set({ text: 'No greeting here.', noGreeting: true })
    const started = Date.now()
    const outcome = await elevenLabsAdapter.deliver(taskPayload(), agent, adapterContext())
    assert.deepEqual(outcome, { kind: 'answered', output: { text: 'No greeting here.' } })
    assert.ok(Date.now() - started >= GREETING_WAIT_MS - 50, 'the task waited for a greeting that could have come')
  })

  it('sends the operator feedback of a revision', async () => {
    fake.steps.set({ text: 'Revised.' })
    const outcome = await elevenLabsAdapter.deliver(taskPayload({ feedback: 'Be shorter.', attempt: 2 }), agent, adapterContext())
    assert.deepEqual(outcome, { kind: 'answered', output: { text: 'Revised.' } })
    assert.match(fake.received.at(-1)![1].text, /Operator feedback[^]*Be shorter\./)
  })

  it('a public agent (no authMode) connects with its agent_id and no key', async () => {
    fake.steps.set({ text: 'Public answer.' })
    const requests = fake.requests.length
    const outcome = await elevenLabsAdapter.deliver(taskPayload(), { ...agent, authMode: null, secret: null }, adapterContext())
    assert.deepEqual(outcome, { kind: 'answered', output: { text: 'Public answer.' } })
    assert.equal(fake.requests.length, requests, 'no signed URL is asked for')
    assert.equal(fake.connections.at(-1)!.url, '/v1/convai/conversation?agent_id=agent_7')
    assert.equal(fake.connections.at(-1)!.headers['xi-api-key'], undefined)
  })

  it('a wrong key is agent-rejected, without the key in the detail', async () => {
    const outcome = await elevenLabsAdapter.deliver(taskPayload(), { ...agent, secret: 'xi-wrong-key-0000' }, adapterContext())
    assert.equal(outcome.kind === 'failed' && outcome.code, 'agent-rejected')
    assert.doesNotMatch(JSON.stringify(outcome), /xi-wrong|sk-test/)
  })

  it('a rate limit is a retry, and the next try succeeds', async () => {
    fake.steps.set({ status: 429 }, { text: 'After the limit.' })
    const first = await elevenLabsAdapter.deliver(taskPayload(), agent, adapterContext())
    assert.equal(first.kind, 'retry')
    const second = await elevenLabsAdapter.deliver(taskPayload(), agent, adapterContext())
    assert.deepEqual(second, { kind: 'answered', output: { text: 'After the limit.' } })
  })

  it('a refused WebSocket upgrade maps by status (403 rejected, 503 retry)', async () => {
    fake.steps.set({ upgradeStatus: 403 })
    const refused = await elevenLabsAdapter.deliver(taskPayload(), { ...agent, authMode: null }, adapterContext())
    assert.equal(refused.kind === 'failed' && refused.code, 'agent-rejected')
    fake.steps.set({ upgradeStatus: 503 })
    const busy = await elevenLabsAdapter.deliver(taskPayload(), { ...agent, authMode: null }, adapterContext())
    assert.equal(busy.kind, 'retry')
  })

  it('a malformed frame is agent-failed', async () => {
    fake.steps.set({ raw: 'this is not json' })
    const outcome = await elevenLabsAdapter.deliver(taskPayload(), agent, adapterContext())
    assert.equal(outcome.kind === 'failed' && outcome.code, 'agent-failed')
    fake.steps.set({ raw: JSON.stringify({ type: 'agent_response', agent_response_event: {} }) })
    const shapeless = await elevenLabsAdapter.deliver(taskPayload(), agent, adapterContext())
    assert.equal(shapeless.kind === 'failed' && shapeless.code, 'agent-failed')
  })

  it('a conversation closed without an answer is agent-failed', async () => {
    fake.steps.set({ close: true })
    const outcome = await elevenLabsAdapter.deliver(taskPayload(), agent, adapterContext())
    assert.equal(outcome.kind === 'failed' && outcome.code, 'agent-failed')
  })

  it('an agent that never answers is a retry when the dispatch time-out passes, and the socket is closed', async () => {
    fake.steps.set({ silent: true })
    const outcome = await elevenLabsAdapter.deliver(taskPayload(), agent, adapterContext(300))
    assert.equal(outcome.kind, 'retry')
    assert.match(outcome.kind === 'retry' ? outcome.detail : '', /within 300 ms/)
    await waitFor(() => fake.openSockets() === 0, { timeoutMs: 2000, what: 'the socket to be closed' })
  })

  it('a closed port is a retry', async () => {
    const outcome = await elevenLabsAdapter.deliver(taskPayload(), { ...agent, endpointUrl: 'http://127.0.0.1:1' }, adapterContext())
    assert.equal(outcome.kind, 'retry')
  })

  it('needs config.agentId (the credential for api_key agents is checked by the registry: auth-mode.test.ts)', () => {
    assert.match(elevenLabsAdapter.unavailable({ ...agent, config: {} }) ?? '', /config\.agentId/)
    assert.equal(elevenLabsAdapter.unavailable({ ...agent, authMode: 'none', secret: null }), null)
  })
})
