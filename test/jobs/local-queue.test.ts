// test lane: clock — instances started and stopped, and jobs that wait on the real clock (scripts/test.mjs).
// On PostgreSQL an instance takes up to TANDEM_WORKERS + 1 due jobs into a queue of its own (graphile-worker's
// batching, src/jobs/index.ts), and it does so even while all its workers are busy. A queued job that none of its
// workers has taken within the poll interval goes back to the table, so another instance runs it. graphile-worker's
// own default is 5 minutes, which would keep a delivery waiting for a busy instance's worker while another instance
// has nothing to do. Here instance A, alone, gets three deliveries for its two workers while the agent holds every
// delivery open. Then B starts, and the third delivery reaches the agent from B, long before A's workers are free.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { request, serverGroup } from '../child-server.js'
import { dialects, freshDatabase } from '../helpers.js'
import { startAgentServer } from '../runs/agent-server.js'
import { waitFor } from '../wait.js'

for (const dialect of dialects().filter((d) => d === 'postgres')) {
  describe(`a busy instance's queued jobs (${dialect})`, () => {
    it('go back to the table within the poll interval, and another instance runs them', { timeout: 120000 }, async () => {
      let release: () => void = () => {}
      const held = new Promise<void>((resolve) => (release = resolve))
      const agent = await startAgentServer(async () => {
        await held
        return { status: 200, body: { output: { text: 'done' } } }
      })
      const database = await freshDatabase('postgres', { ownDatabase: true })
      const servers = serverGroup({ DATABASE_URL: database.url, TANDEM_AUTH: 'local', TANDEM_EGRESS_ALLOW: '127.0.0.0/8', TANDEM_WORKERS: '2' }, { stderr: 'ignore' })
      try {
        const a = await servers.start().url
        const agentId = (await request(a, 'POST', '/api/agents', { name: 'Agent', endpointUrl: agent.url })).json.id
        const streamId = (await request(a, 'POST', '/api/streams', { name: 'queued' })).json.id
        const phase = { id: randomUUID(), agentId, goal: 'g', instructions: 'i', autoAdvance: true, phaseName: 'Only', operatorPool: [] }
        const cycleId = (await request(a, 'POST', `/api/cycles/streams/${streamId}/cycles`, { triggerName: 't', description: 'd', phasesTemplate: [phase] })).json.id
        for (let i = 0; i < 3; i++) assert.equal((await request(a, 'POST', `/api/cycles/streams/${streamId}/cycles/${cycleId}/runs`, {})).status, 201)
        await waitFor(() => agent.deliveries.length >= 2, { what: "A's two workers to deliver", timeoutMs: 20000 })
        // A's workers are held by the agent; the third delivery job is due, and A took it into its queue.
        await servers.start().url
        const listening = Date.now()
        // B finds it at its first fetch or its next poll (every second); A's workers stay held till the test ends.
        await waitFor(() => agent.deliveries.length >= 3, { what: 'the third delivery, from B', timeoutMs: 10000 })
        const took = Date.now() - listening
        assert.equal(agent.deliveries.length, 3, 'each task delivered once')
        console.log(`local queue: the third delivery reached the agent ${took} ms after B listened, while A's workers were held`)
      } finally {
        release()
        await servers.stopAll('SIGKILL')
        await agent.close()
        await database.drop()
      }
    })
  })
}
