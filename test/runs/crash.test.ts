// test lane: clock — server processes killed (SIGKILL) and restarted (scripts/test.mjs).
// A server killed (SIGKILL) in the middle of a delivery loses nothing: the task is delivered again with the same
// webhook-id, in the trace of the request that started the run, and the run finishes, with one output. SQLite: the restarted process resumes it. PostgreSQL: a
// second instance, already running, frees the dead one's job (TANDEM_FAILOVER_S) and delivers when the dead one's
// delivery lease ends; a task is never being delivered twice at the same time. The scorecards count the phase run
// once, and the notes of its changes (one written by the dead process) are folded by the live one.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { randomUUID } from 'node:crypto'
import { request, serverGroup } from '../child-server.js'
import { dialects, freshDatabase } from '../helpers.js'
import { waitFor } from './agent-server.js'
import { connect } from '../../src/db/connect.js'

for (const dialect of dialects()) {
  describe(`runs survive a SIGKILL mid-delivery (${dialect})`, () => {
    it('delivers the task again with the same webhook-id and finishes the run once', { timeout: 120000 }, async () => {
      const database = await freshDatabase(dialect, { ownDatabase: true })
      const deliveries: string[] = []
      const traces: string[] = []
      let inFlight = 0
      let maxInFlight = 0
      const agent = createServer((req, res) => {
        const chunks: Buffer[] = []
        req.on('data', (c) => chunks.push(c))
        req.on('end', () => {
          deliveries.push(String(req.headers['webhook-id']))
          traces.push(String(req.headers.traceparent))
          inFlight++
          maxInFlight = Math.max(maxInFlight, inFlight)
          res.on('close', () => inFlight--)
          if (deliveries.length === 1) return // the first delivery hangs: the server is killed meanwhile
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ output: { text: 'after the crash' } }))
        })
      })
      await new Promise<void>((resolve) => agent.listen(0, '127.0.0.1', resolve))
      const endpointUrl = `http://127.0.0.1:${(agent.address() as AddressInfo).port}/hook`
      const servers = serverGroup({ DATABASE_URL: database.url, TANDEM_AUTH: 'local', TANDEM_EGRESS_ALLOW: '127.0.0.0/8', TANDEM_DISPATCH_TIMEOUT_MS: '3000', TANDEM_FAILOVER_S: '6' })
      try {
        const first = servers.start()
        const base = await first.url
        const agentId = (await request(base, 'POST', '/api/agents', { name: 'Crash agent', endpointUrl })).json.id
        const streamId = (await request(base, 'POST', '/api/streams', { name: 'crash' })).json.id
        const phase = { id: randomUUID(), agentId, goal: 'g', instructions: 'i', autoAdvance: true, phaseName: 'Only', operatorPool: [] }
        const cycleId = (await request(base, 'POST', `/api/cycles/streams/${streamId}/cycles`, { triggerName: 't', description: 'd', phasesTemplate: [phase] })).json.id
        const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'
        const run = (await request(base, 'POST', `/api/cycles/streams/${streamId}/cycles/${cycleId}/runs`, {}, { traceparent })).json
        await waitFor(() => deliveries.length >= 1, 20000, 'the first delivery')

        // PostgreSQL: another instance is up before the first dies; SQLite: one process, restarted.
        const survivor = dialect === 'postgres' ? servers.start() : undefined
        await survivor?.url
        await first.stop('SIGKILL')
        const again = await (survivor ?? servers.start()).url
        const done = await waitFor(async () => {
          const current = (await request(again, 'GET', `/api/runs/${run.id}`)).json
          return current.status === 'succeeded' ? current : undefined
        }, 60000, 'the run to succeed after the crash')
        assert.ok(deliveries.length >= 2)
        assert.equal(new Set(deliveries).size, 1, 'every delivery carries the same webhook-id (the task id)')
        assert.equal(maxInFlight, 1, 'never delivered twice at the same time')
        for (const sent of traces) assert.match(sent, /^00-4bf92f3577b34da6a3ce929d0e0e4736-(?!00f067aa0ba902b7)[0-9a-f]{16}-01$/, 'the run\'s trace, stored, outlives the process')
        assert.equal(done.phases[0].attempts, 1)
        assert.equal(done.phases[0].output.text, 'after the crash')
        const messages = (await request(again, 'GET', `/api/chat/streams/${streamId}/messages`)).json.data
        assert.equal(messages.filter((m: any) => m.authorType === 'agent').length, 1, 'the output is posted once')
        const scorecard = (await request(again, 'GET', `/api/insights/agents/${agentId}`)).json
        assert.equal(scorecard.agent.phasesAnswered, 1, 'the scorecard counts the answer once')
        const { db, close } = connect(database.url)
        try {
          await waitFor(async () => {
            const notes = await db.selectFrom('insight_unfolded').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()
            const days = await db.selectFrom('insight_agent_days').select(['phase_runs', 'answered']).where('agent_id', '=', agentId).execute()
            return Number(notes.n) === 0 && days.length === 1 && Number(days[0]!.phase_runs) === 1 && Number(days[0]!.answered) === 1
          }, 20000, 'the live process to fold every note into one phase run, answered')
        } finally {
          await close()
        }
        console.log(`crash test (${dialect}): ${deliveries.length} deliveries of one task across a SIGKILL; the run finished once`)
      } finally {
        await servers.stopAll()
        agent.closeAllConnections()
        agent.close()
        await database.drop()
      }
    })
  })
}
