// At most once across a crash (SIGKILL) on the streaming path: a server killed while it reads a remote's event
// stream (the remote task's id already recorded) goes on after the restart with SubscribeToTask and finishes the
// run with the remote's answer; one killed before any event named the task fails that attempt after the restart
// rather than send the message again. Each remote sees each task's message once.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { request, serverGroup } from '../child-server.js'
import { dialects, freshDatabase } from '../helpers.js'
import { waitFor } from '../runs/agent-server.js'
import { startRemoteAgent } from './remote-agent.js'

for (const dialect of dialects()) {
  describe(`A2A streams survive a SIGKILL without sending twice (${dialect})`, () => {
    it('follows the streamed task after the restart, and never resends one whose stream named no task', { timeout: 120000 }, async () => {
      const database = await freshDatabase(dialect, { ownDatabase: true })
      const remote = await startRemoteAgent('stream', { streaming: true })
      const servers = serverGroup({ DATABASE_URL: database.url, TANDEM_AUTH: 'local', TANDEM_EGRESS_ALLOW: '127.0.0.0/8', TANDEM_DISPATCH_TIMEOUT_MS: '20000', TANDEM_POLL_INTERVAL_MS: '100' })
      const sends = (runId: string) => remote.calls.filter((c) => (c.method === 'SendMessage' || c.method === 'SendStreamingMessage') && c.params.message?.parts?.[1]?.data?.tandem?.run?.id === runId).length
      try {
        const first = servers.start()
        const base = await first.url
        const agentId = (await request(base, 'POST', '/api/agents', { name: 'Remote', providerType: 'custom_webhook', endpointUrl: remote.cardUrl, config: { protocol: 'a2a' }, capabilities: { streaming: true, tools: [] } })).json.id
        const streamId = (await request(base, 'POST', '/api/streams', { name: 'crash' })).json.id
        const phase = { id: randomUUID(), agentId, goal: 'g', instructions: 'i', autoAdvance: true, phaseName: 'Only', operatorPool: [] }
        const cycleId = (await request(base, 'POST', `/api/cycles/streams/${streamId}/cycles`, { triggerName: 't', description: 'd', phasesTemplate: [phase] })).json.id
        const start = async () => (await request(base, 'POST', `/api/cycles/streams/${streamId}/cycles/${cycleId}/runs`, {})).json.id as string
        const followed = await start()
        // The chunks are in the chat: the remote task's id was recorded before them (the stream stays open).
        await waitFor(async () => {
          const messages = (await request(base, 'GET', `/api/chat/streams/${streamId}/messages`)).json?.data ?? []
          return messages.some((m: any) => m.status === 'streaming' && m.text === 'Hello world') || undefined
        }, 20000, 'the streamed chunks')
        remote.behaviour = 'hang'
        const unanswered = await start()
        await waitFor(() => sends(unanswered) === 1 || undefined, 20000, 'the second message')
        await first.stop('SIGKILL')

        remote.behaviour = 'stream'
        remote.finish(' after the crash')
        const again = await servers.start().url
        const runOf = (id: string, status: string) => waitFor(async () => {
          const run = (await request(again, 'GET', `/api/runs/${id}`)).json
          return run.status === status ? run : undefined
        }, 60000, `run ${id} to be ${status}`)
        const done = await runOf(followed, 'succeeded')
        assert.equal(done.phases[0].output.text, 'Hello world after the crash')
        const failed = await runOf(unanswered, 'failed')
        assert.match(failed.phases[0].error.detail, /not sent again/)
        assert.equal(sends(followed), 1, 'the streamed task was sent once')
        assert.equal(sends(unanswered), 1, 'the unanswered task was sent once')
      } finally {
        await servers.stopAll()
        await remote.close()
        await database.drop()
      }
    })
  })
}
