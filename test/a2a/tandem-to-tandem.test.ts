// Tandem to Tandem: a phase of one Tandem done by an exposed cycle of another, over A2A. Tandem B's cycle has an
// agent's phase behind @maria's gate: while it waits, Tandem A's phase follows the remote task (AUTH_REQUIRED,
// decided out of band); once @maria approves on B, A's phase takes B's output as its own and A's run succeeds.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { startAgentServer, waitFor, type AgentServer } from '../runs/agent-server.js'
import { createAgent, createCycle, createStream, runIn, startRun } from '../runs/setup.js'
import { expose, keyFor, listen } from './setup.js'
import { bearer } from '../auth.js'

for (const dialect of dialects()) {
  describe(`Tandem to Tandem over A2A (${dialect})`, () => {
    let a: FastifyInstance
    let b: FastifyInstance
    let agent: AgentServer

    before(async () => {
      const env = { TANDEM_WORKERS: '4', TANDEM_EGRESS_ALLOW: '127.0.0.0/8', TANDEM_POLL_INTERVAL_MS: '50' }
      a = await build(dialect, env, { ownDatabase: true })
      b = await build(dialect, env, { ownDatabase: true })
      agent = await startAgentServer()
      await listen(b)
    })
    after(async () => {
      await a.close()
      await b.close()
      await agent.close()
    })

    it('a phase of A is done by an exposed cycle of B, through B\'s gate', async () => {
      const bStream = await createStream(b, 'Legal')
      const bAgent = await createAgent(b, { endpointUrl: agent.url })
      const bCycle = await createCycle(b, bStream, [{ agentId: bAgent, autoAdvance: false, operatorPool: ['@maria'], name: 'Contract review' }], 'contract-review')
      await expose(b, bStream, bCycle)
      const ottoKey = await keyFor(b, 'otto')
      const mariaKey = await keyFor(b, 'maria')

      const credentialId = (await send(a, 'POST', '/api/credentials', { name: 'B key', secret: ottoKey })).json().id
      const cardUrl = `${b.listeningOrigin}/a2a/cycles/${bCycle}/.well-known/agent-card.json`
      const remote = await createAgent(a, { name: 'Legal at B', providerType: 'custom_webhook', endpointUrl: cardUrl, authMode: 'api_key', credentialId, config: { protocol: 'a2a' } })
      const aStream = await createStream(a, 'Deals')
      const aCycle = await createCycle(a, aStream, [{ agentId: remote, autoAdvance: true, name: 'Legal' }], 'deal')
      const run = await startRun(a, aStream, aCycle)

      // B's task waits for @maria (AUTH_REQUIRED): in A, an a2a.authorize approval of the phase; A keeps following B.
      const bRun = await waitFor(async () => {
        const page = (await send(b, 'GET', `/api/cycles/streams/${bStream}/runs?status=waiting`)).json()
        return page.data?.find((r: any) => r.cycleId === bCycle)
      }, 20000, 'B\'s run to wait')
      assert.equal(bRun.trigger.kind, 'a2a')
      const aWaiting = await runIn(a, run.id, 'waiting', 20000)
      assert.equal(aWaiting.phases[0].status, 'awaiting_tool_approval')
      const [authorize] = (await send(a, 'GET', `/api/runs/${run.id}/tool-calls`)).json().data
      assert.equal(authorize.name, 'a2a.authorize')
      assert.match(authorize.input.message, /^Waiting for @maria to decide "Contract review"/)
      const waiting = await runIn(b, bRun.id, 'waiting')
      const decided = await send(b, 'POST', `/api/runs/${bRun.id}/phases/${waiting.phases[0].id}/decision`, { decision: 'approve' }, bearer(mariaKey))
      assert.equal(decided.statusCode, 200, decided.body)

      const done = await runIn(a, run.id, ['succeeded', 'failed'], 20000)
      assert.equal(done.status, 'succeeded', JSON.stringify(done.phases[0].error))
      assert.equal(done.phases[0].output.text, 'done: Contract review #1')
      // B moved on before anyone in A decided: the authorization is settled, undecided, and nothing was sent back.
      const settled = (await send(a, 'GET', `/api/runs/${run.id}/tool-calls`)).json().data[0]
      assert.deepEqual([settled.status, settled.approval.decision], ['succeeded', null])
      assert.match(settled.output, /^undecided/)
    })
  })
}
