// When agents misbehave, runs still end, each with a problem that says why: unreachable (5xx, time-outs, after
// TANDEM_DISPATCH_ATTEMPTS deliveries with the same webhook-id), rejected (4xx, redirects), failed (garbage),
// unavailable (no endpoint, missing credential, deleted agent), egress-denied. Signed deliveries with a
// credential, and the secret appears in no response, event or message.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { Webhook } from 'standardwebhooks'
import { build, dialects, send } from '../helpers.js'
import { startAgentServer, waitFor, type AgentServer } from './agent-server.js'
import { pendingJobs } from '../clock.js'
import { deliveryKey } from '../../src/runs/machine/jobs.js'
import { createAgent, createCycle, createStream, runIn, startRun } from './setup.js'

for (const dialect of dialects()) {
  describe(`run failures (${dialect})`, () => {
    let app: FastifyInstance
    let streamId: string
    const servers: AgentServer[] = []

    before(async () => {
      app = await build(dialect, { TANDEM_DISPATCH_ATTEMPTS: '2', TANDEM_DISPATCH_TIMEOUT_MS: '500', TANDEM_EGRESS_ALLOW: '127.0.0.0/8' }, { ownDatabase: true })
      streamId = await createStream(app)
    })
    after(async () => {
      await app.close()
      await Promise.all(servers.map((s) => s.close()))
    })

    async function runAgainst(answer: AgentServer['answer'], agentBody: Record<string, unknown> = {}) {
      const server = await startAgentServer(answer)
      servers.push(server)
      const agentId = await createAgent(app, { endpointUrl: server.url, ...agentBody })
      const run = await startRun(app, streamId, await createCycle(app, streamId, [{ agentId }]))
      return { server, run, agentId }
    }

    it('5xx every time: retried with the same webhook-id, then agent-unreachable', { timeout: 30000 }, async () => {
      const { server, run } = await runAgainst(() => ({ status: 503 }))
      const failed = await runIn(app, run.id, 'failed')
      assert.equal(failed.error.type, 'urn:tandem:problem:agent-unreachable')
      assert.match(failed.error.detail, /after 2 attempts.*503/)
      assert.equal(server.deliveries.length, 2)
      assert.equal(server.deliveries[0]!.headers['webhook-id'], server.deliveries[1]!.headers['webhook-id'])
    })

    it('429 with Retry-After, then an answer: the run goes on', { timeout: 30000 }, async () => {
      let calls = 0
      const { server, run } = await runAgainst(() => (++calls === 1 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 200, body: { output: { text: 'ok' } } }))
      const done = await runIn(app, run.id, 'succeeded')
      assert.equal(done.phases[0].output.text, 'ok')
      assert.equal(server.deliveries.length, 2)
    })

    it('no answer within TANDEM_DISPATCH_TIMEOUT_MS counts as unreachable', { timeout: 30000 }, async () => {
      const { run } = await runAgainst(() => 'hang')
      const failed = await runIn(app, run.id, 'failed')
      assert.equal(failed.error.type, 'urn:tandem:problem:agent-unreachable')
      assert.match(failed.error.detail, /no answer within 500 ms/)
    })

    it('a dropped connection is retried, then unreachable', { timeout: 30000 }, async () => {
      const { run } = await runAgainst(() => 'destroy')
      const failed = await runIn(app, run.id, 'failed')
      assert.equal(failed.error.type, 'urn:tandem:problem:agent-unreachable')
    })

    it('4xx and redirects are rejected at once, redirects never followed', async () => {
      const notFound = await runAgainst(() => ({ status: 404 }))
      const failed = await runIn(app, notFound.run.id, 'failed')
      assert.equal(failed.error.type, 'urn:tandem:problem:agent-rejected')
      assert.match(failed.error.detail, /404/)
      assert.equal(notFound.server.deliveries.length, 1)
      const target = await startAgentServer()
      servers.push(target)
      const redirect = await runAgainst(() => ({ status: 302, headers: { location: target.url } }))
      const rejected = await runIn(app, redirect.run.id, 'failed')
      assert.equal(rejected.error.type, 'urn:tandem:problem:agent-rejected')
      assert.match(rejected.error.detail, /redirect/)
      assert.equal(target.deliveries.length, 0, 'the redirect was not followed')
    })

    it('an answer that is not a valid output fails the phase with agent-failed', async () => {
      const { run } = await runAgainst(() => ({ status: 200, body: { output: { text: 5 } } }))
      const failed = await runIn(app, run.id, 'failed')
      assert.equal(failed.error.type, 'urn:tandem:problem:agent-failed')
      assert.match(failed.error.detail, /\/output\/text/)
      // A 2xx that is not JSON takes the task (the answer is to come at result.url).
      const plain = await runAgainst(() => ({ status: 200, body: 'OK' }))
      // Delivered, and its delivery job done (a later one, a poll, is not due): nothing more happens to the run now.
      const [delivery] = await waitFor(() => (plain.server.deliveries.length > 0 ? plain.server.deliveries : undefined), 10000, 'the delivery')
      await waitFor(async () => ((await pendingJobs(app, deliveryKey(delivery!.body.task.id))).every((job) => Date.parse(job.runAt) > Date.now()) ? true : undefined), 10000, 'the delivery job to be done')
      assert.equal((await send(app, 'GET', `/api/runs/${plain.run.id}`)).json().status, 'running')
    })

    it('agent-unavailable: no endpointUrl, a missing credential, a deleted agent', async () => {
      const noEndpoint = await createAgent(app, {})
      const run1 = await startRun(app, streamId, await createCycle(app, streamId, [{ agentId: noEndpoint }]))
      const failed1 = await runIn(app, run1.id, 'failed')
      assert.equal(failed1.error.type, 'urn:tandem:problem:agent-unavailable')
      assert.match(failed1.error.detail, /endpointUrl/)

      const missingCredential = await createAgent(app, { endpointUrl: 'http://127.0.0.1:9/x', credentialId: '01234567-89ab-7def-8123-456789abcdef' })
      const run2 = await startRun(app, streamId, await createCycle(app, streamId, [{ agentId: missingCredential }]))
      const failed2 = await runIn(app, run2.id, 'failed')
      assert.equal(failed2.error.type, 'urn:tandem:problem:agent-unavailable')
      assert.match(failed2.error.detail, /credential/)

      const doomed = await createAgent(app, { endpointUrl: 'http://127.0.0.1:9/x' })
      const cycleId = await createCycle(app, streamId, [{ agentId: doomed }])
      assert.equal((await send(app, 'DELETE', `/api/agents/${doomed}`)).statusCode, 204)
      const run3 = await startRun(app, streamId, cycleId)
      const failed3 = await runIn(app, run3.id, 'failed')
      assert.equal(failed3.error.type, 'urn:tandem:problem:agent-unavailable')
      assert.match(failed3.error.detail, /no longer exists/)
    })

    it('signs with the credential (Standard Webhooks), sends it as Bearer for api_key, and never shows it', async () => {
      const secret = `whsec_${Buffer.from('a known secret of thirty-two b!!').toString('base64')}`
      const credential = await send(app, 'POST', '/api/credentials', { name: 'hook key', secret })
      assert.equal(credential.statusCode, 201, credential.body)
      const { server, run } = await runAgainst(() => ({ status: 200, body: { output: { text: 'signed ok' } } }), { credentialId: credential.json().id, authMode: 'api_key' })
      const done = await runIn(app, run.id, 'succeeded')
      const delivery = server.deliveries[0]!
      assert.doesNotThrow(() => new Webhook(secret).verify(delivery.raw, delivery.headers as Record<string, string>))
      assert.equal(delivery.headers.authorization, `Bearer ${secret}`)
      assert.ok(!delivery.raw.includes(secret), 'the payload does not carry the secret')
      const seen = [
        JSON.stringify(done),
        (await send(app, 'GET', `/api/cycles/streams/${streamId}/runs?limit=100`)).body,
        (await send(app, 'GET', `/api/chat/streams/${streamId}/messages?limit=100`)).body,
        (await send(app, 'GET', `/api/streams/${streamId}/events?after=0`, undefined, { accept: 'application/json' })).body,
        credential.body,
      ]
      for (const text of seen) assert.ok(!text.includes(secret) && !text.includes('a known secret'), 'the secret leaked')
    })
  })

  describe(`egress guard on deliveries (${dialect})`, () => {
    it('a loopback endpoint without TANDEM_EGRESS_ALLOW fails with egress-denied and receives nothing', async () => {
      const app = await build(dialect, {}, { ownDatabase: true })
      const server = await startAgentServer()
      try {
        const streamId = await createStream(app)
        const agentId = await createAgent(app, { endpointUrl: server.url })
        const run = await startRun(app, streamId, await createCycle(app, streamId, [{ agentId }]))
        const failed = await runIn(app, run.id, 'failed')
        assert.equal(failed.error.type, 'urn:tandem:problem:egress-denied')
        assert.equal(server.deliveries.length, 0)
      } finally {
        await app.close()
        await server.close()
      }
    })
  })
}
