// Claiming tasks (custom_token_only) with agent keys, long-polls, leases and re-claims, task time-outs; and the
// races: two decisions on one phase (exactly one wins), a result racing a cancel (the run ends consistent).
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { startAgentServer, waitFor, type AgentServer } from './agent-server.js'
import { createAgent, createCycle, createStream, getRun, runIn, startRun } from './setup.js'
import { bearer, createKey } from '../auth.js'

const claim = (app: FastifyInstance, key: string, body: unknown = {}) => send(app, 'POST', '/api/tasks/claim', body, bearer(key))

for (const dialect of dialects()) {
  describe(`claims and races (${dialect})`, () => {
    let app: FastifyInstance
    let streamId: string
    let agentId: string
    let agentKey: string
    let slow: AgentServer

    before(async () => {
      app = await build(dialect, { TANDEM_TASK_LEASE_S: '1', TANDEM_EGRESS_ALLOW: '127.0.0.0/8' }, { ownDatabase: true })
      streamId = await createStream(app)
      agentId = await createAgent(app, { providerType: 'custom_token_only' })
      const workspaceId = (await send(app, 'GET', '/api/me')).json().workspaceId
      agentKey = (await createKey(app, { workspaceId, name: 'claimer', agentId })).key
      slow = await startAgentServer(() => ({ status: 202 }))
    })
    after(async () => {
      await app.close()
      await slow.close()
    })

    it('claims with an agent key only; 204 when none; the payload and an answer with the agent key', async () => {
      assert.equal((await claim(app, agentKey)).statusCode, 204)
      const admin = await send(app, 'POST', '/api/tasks/claim', {})
      assert.equal(admin.statusCode, 403)
      assert.equal((await claim(app, agentKey, { waitSeconds: 31 })).statusCode, 400)
      assert.equal((await claim(app, agentKey, { waitSeconds: 1, more: true })).statusCode, 400)
      const run = await startRun(app, streamId, await createCycle(app, streamId, [{ agentId }]))
      const claimed: any = await waitFor(async () => {
        const res = await claim(app, agentKey)
        return res.statusCode === 200 ? res.json() : undefined
      })
      assert.equal(claimed.run.id, run.id)
      assert.equal(claimed.task.attempt, 1)
      assert.match(claimed.result.token, /^tdt_/)
      assert.equal((await claim(app, agentKey)).statusCode, 204, 'a leased task is not handed out twice')
      const answered = await send(app, 'POST', claimed.result.url.replace(/^https?:\/\/[^/]+/, ''), { output: { text: 'claimed and done' } }, bearer(agentKey))
      assert.equal(answered.statusCode, 200, answered.body)
      assert.equal((await getRun(app, run.id)).status, 'succeeded')
    })

    it('long-polls until a task arrives', async () => {
      const waiting = claim(app, agentKey, { waitSeconds: 10 })
      await waitFor(() => (app.heldRequests.held === 1 ? true : undefined), 10000, 'the claim to hold its slot')
      // Nothing tells when the claim has looked once and found no task: a pause longer than its poll (250 ms).
      await new Promise((r) => setTimeout(r, 300))
      const run = await startRun(app, streamId, await createCycle(app, streamId, [{ agentId }]))
      const res = await waiting
      assert.equal(res.statusCode, 200)
      assert.equal(res.json().run.id, run.id)
      await send(app, 'POST', `/api/runs/${run.id}/cancel`)
    })

    it('a lease that runs out lets the task be claimed again with a new token; the old one is a 409', async () => {
      const run = await startRun(app, streamId, await createCycle(app, streamId, [{ agentId }]))
      const first: any = await waitFor(async () => {
        const res = await claim(app, agentKey)
        return res.statusCode === 200 && res.json().run.id === run.id ? res.json() : undefined
      })
      // Within 1.1 s (TANDEM_TASK_LEASE_S is 1 here), the lease runs out and the task is claimed again.
      const second: any = await waitFor(async () => {
        const res = await claim(app, agentKey)
        return res.statusCode === 200 ? res.json() : undefined
      }, 1100, 'the task to be claimed again')
      assert.equal(second.task.id, first.task.id)
      assert.notEqual(second.result.token, first.result.token)
      const url = `/api/tasks/${first.task.id}/result`
      const stale = await send(app, 'POST', url, { output: { text: 'old' } }, bearer(first.result.token))
      assert.equal(stale.statusCode, 409)
      assert.equal(stale.json().type, 'urn:tandem:problem:task-closed')
      assert.equal((await send(app, 'POST', url, { output: { text: 'new' } }, bearer(second.result.token))).statusCode, 200)
      assert.equal((await getRun(app, run.id)).phases[0].output.text, 'new')
    })

    it('two decisions at once on one phase: exactly one wins, the other is a 409', async () => {
      const people = await createCycle(app, streamId, [{ agentId: '00000000-0000-0000-0000-000000000000' }])
      for (let round = 0; round < 5; round++) {
        const run = await startRun(app, streamId, people)
        const waiting = await runIn(app, run.id, 'waiting')
        const url = `/api/runs/${run.id}/phases/${waiting.phases[0].id}/decision`
        const results = await Promise.all([send(app, 'POST', url, { decision: 'approve' }), send(app, 'POST', url, { decision: 'reject' })])
        assert.deepEqual(results.map((r) => r.statusCode).sort(), [200, 409])
        const final = await getRun(app, run.id)
        assert.equal(final.phases[0].decisions.length, 1)
        assert.equal(final.status, final.phases[0].decisions[0].decision === 'approve' ? 'succeeded' : 'rejected')
      }
    })

    it('a result racing a cancel: the run ends consistent, whichever comes first', async () => {
      const slowAgent = await createAgent(app, { endpointUrl: slow.url })
      const cycleId = await createCycle(app, streamId, [{ agentId: slowAgent }])
      for (let round = 0; round < 5; round++) {
        const run = await startRun(app, streamId, cycleId)
        const delivery = await waitFor(() => slow.deliveries.find((d) => d.body.run.id === run.id))
        const [result, cancel] = await Promise.all([
          send(app, 'POST', `/api/tasks/${delivery.body.task.id}/result`, { output: { text: 'race' } }, bearer(delivery.body.result.token)),
          send(app, 'POST', `/api/runs/${run.id}/cancel`),
        ])
        const final = await getRun(app, run.id)
        if (cancel.statusCode === 200) {
          assert.equal(result.statusCode, 409)
          assert.equal(final.status, 'canceled')
          assert.equal(final.phases[0].output, null)
        } else {
          assert.equal(cancel.statusCode, 409)
          assert.equal(result.statusCode, 200)
          assert.equal(final.status, 'succeeded')
          assert.equal(final.phases[0].output.text, 'race')
        }
      }
    })
  })

  describe(`task time-out (${dialect})`, () => {
    it('a task nobody answers fails with agent-timeout', async () => {
      const app = await build(dialect, { TANDEM_TASK_TIMEOUT_S: '1' }, { ownDatabase: true })
      try {
        const streamId = await createStream(app)
        const agentId = await createAgent(app, { providerType: 'custom_token_only' })
        const run = await startRun(app, streamId, await createCycle(app, streamId, [{ agentId }]))
        const failed = await runIn(app, run.id, 'failed', 20000)
        assert.equal(failed.error.type, 'urn:tandem:problem:agent-timeout')
      } finally {
        await app.close()
      }
    })
  })
}
