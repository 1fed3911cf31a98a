// At most once across a crash (SIGKILL): a task sent to a remote A2A agent is never sent again. A server killed
// while it follows a remote task goes on following it after the restart (GetTask) and finishes the run with the
// remote's answer; one killed while the remote has not yet answered its SendMessage fails that attempt after the
// restart rather than send the message a second time. Each remote sees each task's message once.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { request, serverGroup } from '../child-server.js'
import { dialects, freshDatabase } from '../helpers.js'
import { waitFor } from '../runs/agent-server.js'
import { startRemoteAgent } from './remote-agent.js'

for (const dialect of dialects()) {
  describe(`A2A sends survive a SIGKILL without sending twice (${dialect})`, () => {
    it('follows the sent task after the restart, and never resends one whose answer did not come', { timeout: 120000 }, async () => {
      const database = await freshDatabase(dialect, { ownDatabase: true })
      const remote = await startRemoteAgent('work')
      const servers = serverGroup({ DATABASE_URL: database.url, TANDEM_AUTH: 'local', TANDEM_EGRESS_ALLOW: '127.0.0.0/8', TANDEM_DISPATCH_TIMEOUT_MS: '3000', TANDEM_POLL_INTERVAL_MS: '100' })
      const sentFor = (runId: string) => remote.received.filter((m) => m.parts?.[1]?.data?.tandem?.run?.id === runId).length
      try {
        const first = servers.start()
        const base = await first.url
        const agentId = (await request(base, 'POST', '/api/agents', { name: 'Remote', providerType: 'custom_webhook', endpointUrl: remote.cardUrl, config: { protocol: 'a2a' } })).json.id
        const streamId = (await request(base, 'POST', '/api/streams', { name: 'crash' })).json.id
        const phase = { id: randomUUID(), agentId, goal: 'g', instructions: 'i', autoAdvance: true, phaseName: 'Only', operatorPool: [] }
        const cycleId = (await request(base, 'POST', `/api/cycles/streams/${streamId}/cycles`, { triggerName: 't', description: 'd', phasesTemplate: [phase] })).json.id
        const start = async () => (await request(base, 'POST', `/api/cycles/streams/${streamId}/cycles/${cycleId}/runs`, {})).json.id as string
        const followed = await start()
        await waitFor(() => sentFor(followed) === 1 || undefined, 20000, 'the first message')
        remote.behaviour = 'hang'
        const unanswered = await start()
        await waitFor(() => sentFor(unanswered) === 1 || undefined, 20000, 'the second message')
        await first.stop('SIGKILL')

        remote.behaviour = 'work'
        remote.finish('after the crash')
        const again = await servers.start().url
        const runOf = (id: string, status: string) => waitFor(async () => {
          const run = (await request(again, 'GET', `/api/runs/${id}`)).json
          return run.status === status ? run : undefined
        }, 60000, `run ${id} to be ${status}`)
        const done = await runOf(followed, 'succeeded')
        assert.equal(done.phases[0].output.text, 'after the crash')
        const failed = await runOf(unanswered, 'failed')
        assert.match(failed.phases[0].error.detail, /not sent again/)
        assert.equal(sentFor(followed), 1, 'the followed task was sent once')
        assert.equal(sentFor(unanswered), 1, 'the unanswered task was sent once')
      } finally {
        await servers.stopAll()
        await remote.close()
        await database.drop()
      }
    })
  })
}
