// Every vendor adapter goes out through the context's egress guard: with loopback not allowed, each delivery
// (and each poll) fails with egress-denied, no retry, and the local vendor never sees a request.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { Adapter, AgentTarget } from '../../../src/runs/adapters/adapter.js'
import { adapterFor } from '../../../src/runs/adapters/index.js'
import { startAnthropicFake } from '../../fakes/vendors/anthropic.js'
import { adapterContext, agentTarget, SECRET, taskPayload } from '../../fakes/vendors/context.js'
import { startCursorFake } from '../../fakes/vendors/cursor.js'
import { startDirectLineFake } from '../../fakes/vendors/direct-line.js'
import { startElevenLabsFake } from '../../fakes/vendors/elevenlabs.js'
import type { HttpFake } from '../../fakes/vendors/http.js'
import { startMistralFake } from '../../fakes/vendors/mistral.js'

const adapter = (providerType: string) => adapterFor(providerType) as Adapter

describe('vendor adapters behind the egress guard', () => {
  const fakes: Record<string, HttpFake & { base?: string; openSockets?: () => number }> = {}
  before(async () => {
    fakes.claude = await startAnthropicFake(SECRET)
    fakes.mistral = await startMistralFake(SECRET)
    fakes.elevenlabs = await startElevenLabsFake(SECRET)
    fakes.copilot_studio = await startDirectLineFake(SECRET)
    fakes.cursor = await startCursorFake(SECRET)
  })
  after(() => Promise.all(Object.values(fakes).map((f) => f.close())))

  const agents: Record<string, (url: string) => AgentTarget> = {
    claude: (url) => agentTarget('claude', `${url}/v1`, { config: { model: 'claude-test-1' } }),
    mistral: (url) => agentTarget('mistral', `${url}/v1`, { config: { model: 'mistral-test-1' } }),
    elevenlabs: (url) => agentTarget('elevenlabs', url, { config: { agentId: 'agent_7' } }),
    copilot_studio: (url) => agentTarget('copilot_studio', url, { authMode: 'direct_line' }),
    cursor: (url) => agentTarget('cursor', url, { config: { repository: 'https://github.com/acme/app' } }),
  }

  it('the registry holds all five vendors', () => {
    for (const providerType of Object.keys(agents)) assert.equal(adapterFor(providerType)?.providerType, providerType)
  })

  for (const [providerType, makeAgent] of Object.entries(agents)) {
    for (const host of ['127.0.0.1', 'localhost']) {
      it(`${providerType} at ${host}: egress-denied, nothing sent`, async () => {
        const fake = fakes[providerType]!
        const url = fake.url.replace('127.0.0.1', host)
        const sent = fake.requests.length
        const outcome = await adapter(providerType).deliver(taskPayload(), makeAgent(url), adapterContext(5000, []))
        assert.equal(outcome.kind, 'failed', JSON.stringify(outcome))
        assert.equal(outcome.kind === 'failed' && outcome.code, 'egress-denied')
        assert.equal(fake.requests.length, sent)
        if (fake.openSockets) assert.equal(fake.openSockets(), 0)
      })
    }
  }

  it('a public ElevenLabs agent (straight to the WebSocket) is refused too', async () => {
    const fake = fakes.elevenlabs as Awaited<ReturnType<typeof startElevenLabsFake>>
    const connections = fake.connections.length
    const outcome = await adapter('elevenlabs').deliver(taskPayload(), { ...agents.elevenlabs!(fake.url), authMode: null, secret: null }, adapterContext(5000, []))
    assert.equal(outcome.kind === 'failed' && outcome.code, 'egress-denied')
    assert.equal(fake.connections.length, connections)
  })

  for (const [providerType, state] of [['copilot_studio', { conversationId: 'conv-1', activityId: null, watermark: null }], ['cursor', { cursorAgentId: 'bc-1' }]] as const) {
    it(`${providerType}: a poll is refused too`, async () => {
      const fake = fakes[providerType]!
      const sent = fake.requests.length
      const outcome = await adapter(providerType).poll!({ ...state }, taskPayload(), agents[providerType]!(fake.url), adapterContext(5000, []))
      assert.equal(outcome.kind === 'failed' && outcome.code, 'egress-denied')
      assert.equal(fake.requests.length, sent)
    })
  }
})
