// authMode through the API on both databases: a combination that cannot work is accepted at create (the spec
// allows it) and fails its phase at once with agent-misconfigured naming both fields — for push agents and for
// a token-only agent, which nothing is ever delivered to — and nothing reaches the vendor.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { startAnthropicFake } from '../fakes/vendors/anthropic.js'
import { SECRET } from '../fakes/vendors/context.js'
import { createAgent, createCycle, createStream, runIn, startRun } from '../runs/setup.js'

for (const dialect of dialects()) {
  describe(`authMode in runs (${dialect})`, () => {
    let app: FastifyInstance
    let anthropic: Awaited<ReturnType<typeof startAnthropicFake>>
    let streamId: string
    let credentialId: string

    before(async () => {
      // Its own database on PostgreSQL: graphile-worker's runners on a shared test database are stopped by other files' (helpers.ts).
      app = await build(dialect, { TANDEM_WORKERS: '4', TANDEM_EGRESS_ALLOW: '127.0.0.0/8' }, { ownDatabase: true })
      anthropic = await startAnthropicFake(null)
      streamId = await createStream(app)
      const credential = await send(app, 'POST', '/api/credentials', { name: 'key', secret: SECRET })
      credentialId = credential.json().id
    })
    after(async () => {
      await app.close()
      await anthropic.close()
    })

    const misconfigured = [
      { label: 'claude with direct_line', agent: () => ({ providerType: 'claude', authMode: 'direct_line', credentialId, endpointUrl: anthropic.base, config: { model: 'm' } }) },
      { label: 'claude with api_key and no credentialId', agent: () => ({ providerType: 'claude', authMode: 'api_key', endpointUrl: anthropic.base, config: { model: 'm' } }) },
      { label: 'custom_token_only with api_key', agent: () => ({ providerType: 'custom_token_only', authMode: 'api_key', credentialId }) },
      { label: 'copilot_studio with none', agent: () => ({ providerType: 'copilot_studio', authMode: 'none', endpointUrl: anthropic.url }) },
    ]
    for (const c of misconfigured) {
      it(`${c.label}: created (201), then the phase fails at once with agent-misconfigured`, { timeout: 30000 }, async () => {
        const agentId = await createAgent(app, { name: c.label, ...c.agent() })
        const before = anthropic.requests.length
        const run = await startRun(app, streamId, await createCycle(app, streamId, [{ agentId }]))
        const failed = await runIn(app, run.id, ['failed', 'succeeded'], 20000)
        assert.equal(failed.status, 'failed')
        assert.equal(failed.error.type, 'urn:tandem:problem:agent-misconfigured')
        assert.equal(failed.error.status, 422)
        assert.match(failed.error.detail, /providerType/)
        assert.match(failed.error.detail, /authMode/)
        assert.equal(failed.phases[0].error.type, 'urn:tandem:problem:agent-misconfigured')
        assert.equal(failed.phases[0].attempts, 0, 'no task was created')
        assert.equal(anthropic.requests.length, before)
      })
    }

    it('claude with authMode none and a credential reaches a keyless gateway without the key', { timeout: 30000 }, async () => {
      const agentId = await createAgent(app, { name: 'through a gateway', providerType: 'claude', authMode: 'none', credentialId, endpointUrl: anthropic.base, config: { model: 'm' } })
      anthropic.steps.set({ text: 'answered through the gateway' })
      const run = await startRun(app, streamId, await createCycle(app, streamId, [{ agentId }]))
      const done = await runIn(app, run.id, ['failed', 'succeeded'], 20000)
      assert.equal(done.status, 'succeeded', JSON.stringify(done.error))
      assert.equal(anthropic.requests.at(-1)!.headers['x-api-key'], undefined)
      assert.equal(anthropic.requests.at(-1)!.headers.authorization, undefined)
    })
  })
}
