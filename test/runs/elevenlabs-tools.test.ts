// ElevenLabs client tools in runs, on both databases: the conversation's client_tool_call events are answered
// with client_tool_result from the agent's tools (a real MCP server behind), each call recorded; a tool that needs
// an approval and tandem.ask_operator are not offered (a warning in the phase, an error result), nor is a name
// the agent does not have. The run answers as before.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { startFakeMcpServer, type FakeMcpServer } from '../fakes/mcp-server.js'
import { SECRET } from '../fakes/vendors/context.js'
import { startElevenLabsFake } from '../fakes/vendors/elevenlabs.js'
import { createAgent, createCycle, createStream, runIn, startRun } from './setup.js'

for (const dialect of dialects()) {
  describe(`ElevenLabs client tools (${dialect})`, () => {
    let app: FastifyInstance
    let files: FakeMcpServer
    let elevenlabs: Awaited<ReturnType<typeof startElevenLabsFake>>

    before(async () => {
      app = await build(dialect, { TANDEM_WORKERS: '2', TANDEM_EGRESS_ALLOW: '127.0.0.0/8' }, { ownDatabase: true })
      files = await startFakeMcpServer()
      elevenlabs = await startElevenLabsFake(SECRET)
      assert.equal((await send(app, 'POST', '/api/mcp-servers', { name: 'files', url: files.url, approval: { 'delete_*': 'always' } })).statusCode, 201)
    })
    after(async () => {
      await app.close()
      await files.close()
      await elevenlabs.close()
    })

    it('answers client_tool_call with the tool\'s result, records each call, and offers no tool that waits for an operator', async () => {
      const credential = await send(app, 'POST', '/api/credentials', { name: 'vendor key', secret: SECRET })
      assert.equal(credential.statusCode, 201, credential.body)
      const credentialId = credential.json().id
      const agentId = await createAgent(app, {
        providerType: 'elevenlabs', authMode: 'api_key', credentialId, endpointUrl: elevenlabs.url, config: { agentId: 'agent_7' },
        capabilities: { streaming: false, tools: ['files.echo', 'files.delete_file', 'tandem.ask_operator'] },
      })
      elevenlabs.steps.set({ text: 'I used my tools.', toolCalls: [{ name: 'files__echo', parameters: { text: 'hi' } }, { name: 'files.delete_file', parameters: { path: '/z' } }, { name: 'weather' }] })
      const streamId = await createStream(app)
      const run = await startRun(app, streamId, await createCycle(app, streamId, [{ agentId }]))
      const done = await runIn(app, run.id, 'succeeded')
      const results = Object.fromEntries(elevenlabs.toolResults.map((r: any) => [r.tool_call_id, [r.is_error, r.result]]))
      assert.deepEqual(results.tool_1, [false, 'echo: hi'])
      assert.equal(results.tool_2[0], true)
      assert.match(results.tool_2[1], /no tool named files\.delete_file/)
      assert.match(results.tool_3[1], /no tool named weather/)
      assert.equal(files.calls.filter((c) => c.name === 'delete_file').length, 0)
      const calls = (await send(app, 'GET', `/api/runs/${run.id}/tool-calls`)).json().data
      assert.deepEqual(calls.map((c: any) => [c.name, c.status]), [['files.echo', 'succeeded'], ['files.delete_file', 'failed'], ['weather', 'failed']])
      assert.equal(done.phases[0].warnings.filter((w: string) => /not offered to an ElevenLabs agent/.test(w)).length, 2)
    })
  })
}
