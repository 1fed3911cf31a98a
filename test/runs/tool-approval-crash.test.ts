// test lane: clock — server processes killed (SIGKILL) and restarted (scripts/test.mjs).
// A tool call that needs an approval survives a crash of the service, on both databases: a real server process
// runs a Claude agent's tool loop (a local Anthropic API that streams tool use) against a real MCP server, and is
// killed with SIGKILL (1) while the call awaits its approval, (2) right after the approval, and (3) while the
// approved call is in flight. After each restart the run finishes and the MCP server has received the call
// exactly once: the loop's state was stored with the call, and a dispatched call is never made again.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { request, serverGroup } from '../child-server.js'
import { dialects, freshDatabase } from '../helpers.js'
import { startFakeMcpServer } from '../fakes/mcp-server.js'
import { startAnthropicToolFake } from '../fakes/vendors/tool-models.js'
import { waitFor } from './agent-server.js'

const SECRET_KEY = randomBytes(32).toString('base64')

async function created(base: string, path: string, body: unknown): Promise<any> {
  const res = await request(base, 'POST', path, body)
  assert.equal(res.status, 201, JSON.stringify(res.json))
  return res.json
}

for (const dialect of dialects()) {
  describe(`tool approval across a crash (${dialect})`, () => {
    it('SIGKILL while a call awaits approval, right after the approval, and with the call in flight: each call made once, each run finishes', { timeout: 180000 }, async () => {
      const database = await freshDatabase(dialect, { ownDatabase: true })
      const model = await startAnthropicToolFake()
      const mcp = await startFakeMcpServer()
      const servers = serverGroup({
        DATABASE_URL: database.url,
        TANDEM_AUTH: 'local',
        TANDEM_SECRET_KEY: SECRET_KEY,
        TANDEM_DISPATCH_TIMEOUT_MS: '5000',
        TANDEM_FAILOVER_S: '6',
        TANDEM_WORKERS: '2',
        TANDEM_EGRESS_ALLOW: '127.0.0.0/8',
      })
      const deletes = (path: string) => mcp.calls.filter((c) => c.name === 'delete_file' && (c.arguments as { path: string }).path === path).length
      try {
        let base = await servers.start().url
        const stream = await created(base, '/api/streams', { name: 'crash' })
        await created(base, '/api/mcp-servers', { name: 'files', url: mcp.url, approval: { 'delete_*': 'always' } })
        const agent = await created(base, '/api/agents', {
          name: 'janitor', providerType: 'claude', authMode: 'none', endpointUrl: model.base, config: { model: 'claude-test' },
          capabilities: { streaming: false, tools: ['files.delete_file'] },
        })
        const cycle = await created(base, `/api/cycles/streams/${stream.id}/cycles`, {
          triggerName: 'clean', description: 'Clean up',
          phasesTemplate: [{ id: '0193a5b4-0000-7000-8000-000000000124', agentId: agent.id, goal: 'Clean', instructions: 'Delete the file', autoAdvance: true, phaseName: 'Clean', operatorPool: [] }],
        })
        const restart = async () => {
          await servers.stopAll('SIGKILL')
          base = await servers.start().url
        }
        /** A run whose model asks to delete `path`, waiting for the approval; its call's id. */
        const awaitingRun = async (path: string) => {
          model.turns.set({ calls: [{ name: 'files__delete_file', input: { path } }] }, { text: `Deleted ${path}.` })
          const run = await created(base, `/api/cycles/streams/${stream.id}/cycles/${cycle.id}/runs`, { input: {} })
          const call = await waitFor(async () => {
            const calls = (await request(base, 'GET', `/api/runs/${run.id}/tool-calls`)).json?.data ?? []
            const runNow = (await request(base, 'GET', `/api/runs/${run.id}`)).json
            return calls[0]?.status === 'awaiting_approval' && runNow.phases[0].status === 'awaiting_tool_approval' ? calls[0] : undefined
          }, 30000, 'the call to await approval')
          return { runId: run.id as string, callId: call.id as string }
        }
        const approve = async (run: { runId: string; callId: string }) => {
          const res = await request(base, 'POST', `/api/runs/${run.runId}/tool-calls/${run.callId}/decision`, { decision: 'approve' })
          assert.equal(res.status, 200, JSON.stringify(res.json))
        }
        const finished = (runId: string) =>
          waitFor(async () => {
            const res = await request(base, 'GET', `/api/runs/${runId}`)
            return ['succeeded', 'failed'].includes(res.json?.status) ? res.json : undefined
          }, 60000, 'the run to finish after the restart')

        // 1. Killed while the call awaits its approval: approved after the restart, made once.
        const first = await awaitingRun('/tmp/one')
        await restart()
        await approve(first)
        const one = await finished(first.runId)
        assert.equal(one.status, 'succeeded', JSON.stringify(one.error))
        assert.equal(one.phases[0].output.text, 'Deleted /tmp/one.')
        assert.equal(deletes('/tmp/one'), 1)

        // 2. Killed right after the approval (the server is slow, so the call has not been made yet): made once.
        const second = await awaitingRun('/tmp/two')
        mcp.behaviour.delayMs = 1500
        await approve(second)
        await restart()
        mcp.behaviour.delayMs = 0
        const two = await finished(second.runId)
        assert.equal(two.status, 'succeeded', JSON.stringify(two.error))
        assert.equal(deletes('/tmp/two'), 1)
        assert.equal((await request(base, 'GET', `/api/runs/${second.runId}/tool-calls`)).json.data[0].status, 'succeeded')

        // 3. Killed with the approved call in flight: the server has it; it is not made again (recorded as interrupted).
        const third = await awaitingRun('/tmp/three')
        mcp.behaviour.deleteDelayMs = 3000
        await approve(third)
        await waitFor(() => (deletes('/tmp/three') === 1 ? true : undefined), 30000, 'the call to reach the MCP server')
        await restart()
        const three = await finished(third.runId)
        assert.equal(three.status, 'succeeded', JSON.stringify(three.error))
        assert.equal(deletes('/tmp/three'), 1)
        const [call] = (await request(base, 'GET', `/api/runs/${third.runId}/tool-calls`)).json.data
        assert.equal(call.status, 'failed')
        assert.match(call.error, /in flight/)
        console.log(`tool approval crash test (${dialect}): 3 SIGKILLs, delete_file calls per run: ${deletes('/tmp/one')}, ${deletes('/tmp/two')}, ${deletes('/tmp/three')}`)
      } finally {
        await servers.stopAll('SIGKILL')
        await model.close()
        await mcp.close()
        await database.drop()
      }
    })
  })
}
