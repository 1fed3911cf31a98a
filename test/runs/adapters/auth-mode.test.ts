// authMode, the same for every provider (docs/agents-and-vendors.md): the rules walked as a table, then every adapter through
// the registry (as the engine calls it) against the local vendor fakes and the real client libraries (AI SDK,
// ws, fetch), asserting which credential headers each fake received — `none` sends nothing even with a
// credential, `api_key` sends the provider's header, an absent mode is the provider's default, and a
// combination that cannot work fails with agent-misconfigured before anything is sent.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { IncomingHttpHeaders } from 'node:http'
import type { AgentTarget } from '../../../src/runs/adapters/adapter.js'
import { authModeProblem, effectiveAuthMode } from '../../../src/runs/adapters/auth-mode.js'
import { adapterFor } from '../../../src/runs/adapters/index.js'
import { startAnthropicFake } from '../../fakes/vendors/anthropic.js'
import { adapterContext, agentTarget, SECRET, taskPayload } from '../../fakes/vendors/context.js'
import { startCursorFake } from '../../fakes/vendors/cursor.js'
import { startDirectLineFake } from '../../fakes/vendors/direct-line.js'
import { startElevenLabsFake } from '../../fakes/vendors/elevenlabs.js'
import { startHttpFake, type HttpFake } from '../../fakes/vendors/http.js'
import { startMistralFake } from '../../fakes/vendors/mistral.js'
import { bearer } from '../../auth.js'

type Mode = AgentTarget['authMode']
const deliver = (agent: AgentTarget) => adapterFor(agent.providerType)!.deliver(taskPayload(), agent, adapterContext())
const CREDENTIAL_HEADERS = ['x-api-key', 'xi-api-key', 'authorization'] as const
const credentialHeaders = (headers: IncomingHttpHeaders) => Object.fromEntries(CREDENTIAL_HEADERS.filter((h) => headers[h] !== undefined).map((h) => [h, headers[h]]))

describe('authMode rules', () => {
  // [providerType, authMode, has a credential, effective mode, works]
  const table: Array<[string, Mode, boolean, string, boolean]> = [
    ['claude', null, true, 'api_key', true], ['claude', null, false, 'none', true], ['claude', 'api_key', true, 'api_key', true],
    ['claude', 'api_key', false, 'api_key', false], ['claude', 'none', true, 'none', true], ['claude', 'direct_line', true, 'direct_line', false],
    ['mistral', null, true, 'api_key', true], ['mistral', 'none', false, 'none', true], ['mistral', 'direct_line', true, 'direct_line', false], ['mistral', 'api_key', false, 'api_key', false],
    ['cursor', null, false, 'none', true], ['cursor', 'api_key', true, 'api_key', true], ['cursor', 'direct_line', true, 'direct_line', false],
    ['elevenlabs', null, true, 'api_key', true], ['elevenlabs', null, false, 'none', true], ['elevenlabs', 'direct_line', true, 'direct_line', false],
    ['custom_webhook', null, true, 'none', true], ['custom_webhook', 'api_key', true, 'api_key', true], ['custom_webhook', 'api_key', false, 'api_key', false],
    ['custom_webhook', 'direct_line', true, 'direct_line', false],
    ['custom_token_only', null, false, 'none', true], ['custom_token_only', 'none', true, 'none', true],
    ['custom_token_only', 'api_key', true, 'api_key', false], ['custom_token_only', 'direct_line', true, 'direct_line', false],
    ['copilot_studio', null, true, 'direct_line', true], ['copilot_studio', null, false, 'direct_line', false], ['copilot_studio', 'direct_line', true, 'direct_line', true],
    ['copilot_studio', 'api_key', true, 'api_key', false], ['copilot_studio', 'none', true, 'none', false],
  ]
  for (const [providerType, authMode, hasCredential, effective, works] of table) {
    it(`${providerType} with authMode ${authMode} and ${hasCredential ? 'a' : 'no'} credential: ${effective}, ${works ? 'works' : 'agent-misconfigured'}`, () => {
      const fields = { providerType, authMode, hasCredential }
      assert.equal(effectiveAuthMode(fields), effective)
      const problem = authModeProblem(fields)
      if (works) return assert.equal(problem, null)
      assert.match(problem ?? '', new RegExp(`providerType ${providerType}`))
      assert.match(problem ?? '', /authMode/)
    })
  }
})

describe('authMode through each adapter, against the vendor fakes', () => {
  // Keyless fakes (a gateway in front of the vendor) answer any request, so that what was sent can be read.
  let anthropic: Awaited<ReturnType<typeof startAnthropicFake>>
  let mistral: Awaited<ReturnType<typeof startMistralFake>>
  let cursor: Awaited<ReturnType<typeof startCursorFake>>
  let elevenlabs: Awaited<ReturnType<typeof startElevenLabsFake>>
  let directLine: Awaited<ReturnType<typeof startDirectLineFake>>
  let webhook: HttpFake
  before(async () => {
    ;[anthropic, mistral, cursor, elevenlabs, directLine] = await Promise.all([
      startAnthropicFake(null), startMistralFake(null), startCursorFake(null), startElevenLabsFake(SECRET), startDirectLineFake(SECRET),
    ])
    webhook = await startHttpFake(() => ({ body: { output: { text: 'done' } } }))
  })
  after(() => Promise.all([anthropic, mistral, cursor, elevenlabs, directLine, webhook].map((f) => f.close())))

  const http = [
    { label: 'claude', fake: () => anthropic, agent: () => agentTarget('claude', anthropic.base, { config: { model: 'claude-test-1' } }), header: { 'x-api-key': SECRET } },
    { label: 'mistral chat', fake: () => mistral, agent: () => agentTarget('mistral', mistral.base, { config: { model: 'mistral-test-1' } }), header: bearer(SECRET) },
    { label: 'mistral agent', fake: () => mistral, agent: () => agentTarget('mistral', mistral.base, { config: { agentId: 'ag_1' } }), header: bearer(SECRET) },
    { label: 'cursor', fake: () => cursor, agent: () => agentTarget('cursor', cursor.url, { config: { repository: 'https://github.com/acme/app' } }), header: bearer(SECRET) },
  ]
  for (const c of http) {
    it(`${c.label}: api_key sends the key as its header; none sends no credential even with one set; absent follows the credential`, async () => {
      const sent = async (fields: Partial<AgentTarget>) => {
        const before = c.fake().requests.length
        const outcome = await deliver({ ...c.agent(), ...fields })
        assert.notEqual(outcome.kind, 'failed', JSON.stringify(outcome))
        const calls = c.fake().requests.slice(before)
        assert.ok(calls.length > 0)
        return calls.map((call) => credentialHeaders(call.headers))
      }
      for (const headers of await sent({ authMode: 'api_key' })) assert.deepEqual(headers, c.header)
      for (const headers of await sent({ authMode: 'none' })) assert.deepEqual(headers, {})
      for (const headers of await sent({ authMode: null })) assert.deepEqual(headers, c.header)
      for (const headers of await sent({ authMode: null, secret: null })) assert.deepEqual(headers, {})
    })

    it(`${c.label}: direct_line, or api_key with no credential, is agent-misconfigured and nothing is sent`, async () => {
      const before = c.fake().requests.length
      for (const fields of [{ authMode: 'direct_line' as const }, { authMode: 'api_key' as const, secret: null }]) {
        const outcome = await deliver({ ...c.agent(), ...fields })
        assert.equal(outcome.kind, 'failed')
        assert.equal(outcome.kind === 'failed' && outcome.code, 'agent-misconfigured')
        assert.match(outcome.kind === 'failed' ? outcome.detail : '', /providerType .*authMode/)
        assert.doesNotMatch(JSON.stringify(outcome), new RegExp(SECRET))
      }
      assert.equal(c.fake().requests.length, before)
    })
  }

  it('elevenlabs: api_key fetches a signed URL with xi-api-key; none connects as a public agent without the key', async () => {
    const agent = agentTarget('elevenlabs', elevenlabs.url, { config: { agentId: 'agent_7' } })
    let before = elevenlabs.requests.length
    assert.equal((await deliver({ ...agent, authMode: 'api_key' })).kind, 'answered')
    assert.deepEqual(elevenlabs.requests.slice(before).map((r) => credentialHeaders(r.headers)), [{ 'xi-api-key': SECRET }])
    before = elevenlabs.requests.length
    assert.equal((await deliver({ ...agent, authMode: null })).kind, 'answered', 'absent with a credential is api_key')
    assert.equal(elevenlabs.requests.length, before + 1)
    before = elevenlabs.requests.length
    assert.equal((await deliver({ ...agent, authMode: 'none' })).kind, 'answered')
    assert.equal(elevenlabs.requests.length, before, 'no signed-URL call')
    const connection = elevenlabs.connections.at(-1)!
    assert.doesNotMatch(connection.url, /conversation_signature/)
    assert.deepEqual(credentialHeaders(connection.headers), {})
  })

  it('copilot_studio: direct_line (or absent) sends the Direct Line secret; none and api_key are agent-misconfigured', async () => {
    const agent = agentTarget('copilot_studio', directLine.url, { authMode: null })
    for (const authMode of [null, 'direct_line'] as const) {
      const before = directLine.requests.length
      assert.equal((await deliver({ ...agent, authMode })).kind, 'poll')
      for (const call of directLine.requests.slice(before)) assert.deepEqual(credentialHeaders(call.headers), bearer(SECRET))
    }
    const before = directLine.requests.length
    for (const fields of [{ authMode: 'none' as const }, { authMode: 'api_key' as const }, { authMode: null, secret: null }]) {
      const outcome = await deliver({ ...agent, ...fields })
      assert.equal(outcome.kind === 'failed' && outcome.code, 'agent-misconfigured', JSON.stringify(fields))
    }
    assert.equal(directLine.requests.length, before)
  })

  it('custom_webhook: the credential signs every delivery; only api_key also sends it as a Bearer token', async () => {
    const agent = agentTarget('custom_webhook', webhook.url, { authMode: null })
    for (const [authMode, authorization] of [[null, undefined], ['none', undefined], ['api_key', `Bearer ${SECRET}`]] as const) {
      assert.equal((await deliver({ ...agent, authMode })).kind, 'answered')
      const headers = webhook.requests.at(-1)!.headers
      assert.equal(headers.authorization, authorization, String(authMode))
      assert.match(String(headers['webhook-signature']), /^v1,/)
    }
    const outcome = await deliver({ ...agent, authMode: 'direct_line' })
    assert.equal(outcome.kind === 'failed' && outcome.code, 'agent-misconfigured')
  })

  it('unavailable() leaves a misconfigured agent to the delivery, which names it agent-misconfigured', () => {
    const claude = adapterFor('claude')!
    assert.equal(claude.unavailable(agentTarget('claude', anthropic.base, { authMode: 'direct_line', config: {} })), null)
    assert.match(claude.unavailable(agentTarget('claude', anthropic.base, { config: {} })) ?? '', /config\.model/)
  })
})
