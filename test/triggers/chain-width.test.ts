// The width bound of message triggers: four cycles whose trigger matches any agent's answer would start
// 4 + 12 + 36 + 108 + … runs from one person's message (each answer starts every other cycle). One chain starts at
// most MAX_RUNS_PER_CHAIN (50) runs: 4 + 12 + 11 × 3 = 49 here, then every further message is refused — logged
// and counted in tandem_trigger_refusals_total{reason="message-chain"}.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { startAgentServer, waitFor, type AgentServer } from '../runs/agent-server.js'
import { createAgent, createCycle, createStream } from '../runs/setup.js'
import { runsOf } from '../schedules/setup.js'
import { MAX_RUNS_PER_CHAIN } from '../../src/triggers/chains.js'

const text = (value: string) => ({ content: { blocks: [{ type: 'rich_text', elements: [{ type: 'paragraph', children: [{ type: 'text', text: value }] }] }] } })

for (const dialect of dialects()) {
  describe(`message trigger chains (${dialect})`, () => {
    let app: FastifyInstance
    let agent: AgentServer
    before(async () => {
      agent = await startAgentServer(() => ({ status: 200, body: { output: { text: '/echo again' } } }))
      app = await build(dialect, { TANDEM_EGRESS_ALLOW: '127.0.0.0/8' }, { ownDatabase: true })
    })
    after(async () => {
      await app.close()
      await agent.close()
    })

    it('one message starts at most 50 runs in all, however wide its chain; the refusals are counted', { timeout: 120000 }, async () => {
      const agentId = await createAgent(app, { endpointUrl: agent.url })
      const streamId = await createStream(app, 'chain-width')
      for (let i = 0; i < 4; i++) await createCycle(app, streamId, [{ agentId, autoAdvance: true }], 'echo')
      assert.equal((await send(app, 'POST', `/api/streams/${streamId}/message-triggers`, { triggerName: 'echo', match: { prefix: '/echo' } })).statusCode, 201)
      assert.equal((await send(app, 'POST', `/api/chat/streams/${streamId}/messages`, text('/echo start'))).statusCode, 201)
      // 49 runs write 49 messages: 4 + 11 of them start three runs each, the other 34 are refused.
      const refused = async () => Number((await app.database.db.selectFrom('trigger_chains').select((eb) => eb.fn.sum<number>('refused').as('refused')).executeTakeFirst())?.refused ?? 0)
      await waitFor(async () => (await refused()) >= 34 ? true : undefined, 100000, '34 refused messages')
      const runs = await waitFor(async () => {
        const all = await runsOf(app, streamId)
        return all.every((r) => r.status === 'succeeded') ? all : undefined
      }, 30000, 'every run to finish')
      const [chain] = await app.database.db.selectFrom('trigger_chains').selectAll().execute()
      assert.ok(chain, "the chain begun by the person's message")
      assert.equal(chain.runs, 49)
      assert.ok(chain.runs <= MAX_RUNS_PER_CHAIN)
      assert.equal(runs.length, 49)
      assert.equal(await refused(), 34)
      const metrics = (await send(app, 'GET', '/metrics')).body
      assert.match(metrics, /tandem_trigger_refusals_total\{reason="message-chain"\} 34/)
    })
  })
}
