// The MCP server's other tools through the SDK client, their effects read back through REST: an agent's tool call
// approved and denied, a question answered (answeredBy, via mcp), and the stream, cycle and run tools
// (post_message's markdown, idempotency keys, drafts, saves, starts, lists); resources and a subscription's
// notification on the session's GET stream.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { McpError } from '@modelcontextprotocol/sdk/types.js'
import { build, dialects, send } from '../helpers.js'
import { startFakeMcpServer, type FakeMcpServer } from '../fakes/mcp-server.js'
import { createAgent, createCycle, createStream, getRun, NIL, runIn, startRun } from '../runs/setup.js'
import { waitFor } from '../runs/agent-server.js'
import { keyFor } from '../schedules/setup.js'
import { call, connect, listen, type Connected } from './setup.js'
import { bearer, createKey } from '../auth.js'

const local = (url: string) => url.replace(/^https?:\/\/[^/]+/, '')

for (const dialect of dialects()) {
  describe(`MCP server: tools and resources (${dialect})`, () => {
    let app: FastifyInstance
    let base: string
    let files: FakeMcpServer
    let streamId: string
    let agentId: string
    let agentKey: string
    let maria: Record<string, string>
    let stranger: Record<string, string>
    const open: Connected[] = []
    const as = async (headers: Record<string, string>) => {
      const connected = await connect(base, headers)
      open.push(connected)
      // Listing the tools makes the client check every structuredContent against its tool's outputSchema.
      await connected.client.listTools()
      return connected.client
    }

    before(async () => {
      app = await build(dialect, { TANDEM_WORKERS: '4', TANDEM_EGRESS_ALLOW: '127.0.0.0/8' }, { ownDatabase: true })
      base = await listen(app)
      files = await startFakeMcpServer()
      assert.equal((await send(app, 'POST', '/api/mcp-servers', { name: 'files', url: files.url, approval: { 'delete_*': 'always' } })).statusCode, 201)
      const workspaceId = (await send(app, 'GET', '/api/me')).json().workspaceId
      agentId = await createAgent(app, { providerType: 'custom_token_only', capabilities: { streaming: false, tools: ['files.delete_file', 'tandem.ask_operator'] } })
      agentKey = (await createKey(app, { workspaceId, name: 'worker', agentId })).key
      maria = await keyFor(app, 'maria', 'member')
      stranger = await keyFor(app, 'someone', 'admin', 'elsewhere')
      streamId = await createStream(app)
    })
    after(async () => {
      for (const { client } of open) await client.close()
      await app.close()
      await files.close()
    })

    async function claimed(): Promise<any> {
      const run = await startRun(app, streamId, await createCycle(app, streamId, [{ agentId, operatorPool: ['@maria'] }], `t-${randomUUID().slice(0, 8)}`))
      const payload: any = await waitFor(async () => {
        const res = await send(app, 'POST', '/api/tasks/claim', {}, bearer(agentKey))
        return res.statusCode === 200 ? res.json() : undefined
      })
      assert.equal(payload.run.id, run.id)
      return payload
    }
    const asAgent = (payload: any) => bearer(payload.result.token)

    it('decide_tool_call approves an agent\'s call once and denies another; list_tool_calls shows them, via mcp', async () => {
      const client = await as(maria)
      const payload = await claimed()
      const asked = await send(app, 'POST', `${local(payload.toolsUrl)}/files.delete_file`, { input: { path: '/mcp/a' } }, asAgent(payload))
      assert.equal(asked.statusCode, 202, asked.body)
      const callId = asked.json().callId
      const inbox = await call(client, 'list_inbox', { kind: 'tool_approval' })
      assert.deepEqual(inbox.structured.data.map((i: any) => i.callId), [callId])
      const denied = await call(await as(stranger), 'decide_tool_call', { runId: payload.run.id, callId, decision: 'approve' })
      assert.equal(denied.body.status, 404)
      const approved = await call(client, 'decide_tool_call', { runId: payload.run.id, callId, decision: 'approve', note: 'go' })
      assert.equal(approved.isError, false, approved.sentence)
      assert.equal(approved.structured.approval.via, 'mcp')
      const twice = await call(client, 'decide_tool_call', { runId: payload.run.id, callId, decision: 'approve' })
      assert.equal(twice.body.type, 'urn:tandem:problem:not-awaiting-approval')
      await waitFor(async () => files.calls.some((c) => (c.arguments as any).path === '/mcp/a') || undefined)
      assert.equal(files.calls.filter((c) => (c.arguments as any).path === '/mcp/a').length, 1)
      // The call's result is recorded after the server answered it: compare the two reads once it is final.
      await waitFor(async () => (await send(app, 'GET', `/api/runs/${payload.run.id}/tool-calls`, undefined, maria)).json().data[0]?.finishedAt || undefined)
      const listed = await call(client, 'list_tool_calls', { runId: payload.run.id })
      // No key or task token in anything /mcp answered.
      for (const secret of [agentKey, payload.result.token, maria.authorization!.slice('Bearer '.length)]) {
        assert.ok(!JSON.stringify([inbox, denied, approved, twice, listed]).includes(secret))
      }
      assert.deepEqual(listed.structured, (await send(app, 'GET', `/api/runs/${payload.run.id}/tool-calls`, undefined, maria)).json())
      assert.deepEqual({ ...approved.structured, status: 'x', output: null, finishedAt: null }, { ...listed.structured.data[0], status: 'x', output: null, finishedAt: null }, 'the body REST answers')
      assert.equal(listed.structured.data[0].approval.via, 'mcp')
      assert.equal(listed.structured.data[0].answeredBy, null)
    })

    it('answer_question answers an agent\'s question: the output, and answeredBy with via mcp', async () => {
      const client = await as(maria)
      const payload = await claimed()
      const res = await send(app, 'POST', `${local(payload.toolsUrl)}/tandem.ask_operator`, { input: { question: 'Which file?' } }, asAgent(payload))
      assert.equal(res.statusCode, 202, res.body)
      const phaseRunId = (await getRun(app, payload.run.id)).phases[0].id
      const item = (await call(client, 'list_inbox', { kind: 'question' })).structured.data.find((i: any) => i.runId === payload.run.id)
      assert.equal(item.summary, 'Which file?')
      const answered = await call(client, 'answer_question', { runId: payload.run.id, phaseRunId, text: 'the old one' })
      assert.equal(answered.isError, false, answered.sentence)
      assert.deepEqual([answered.structured.output, answered.structured.answeredBy.via, answered.structured.answeredBy.handle], ['the old one', 'mcp', 'maria'])
      const again = await call(client, 'answer_question', { runId: payload.run.id, phaseRunId, text: 'again' })
      assert.equal(again.body.type, 'urn:tandem:problem:not-awaiting-input')
      const read = (await send(app, 'GET', `/api/runs/${payload.run.id}/tool-calls`)).json().data[0]
      assert.equal(read.answeredBy.via, 'mcp')
    })

    it('streams, messages, cycles and runs: post_message reads markdown emphasis, idempotency keys answer the first result', async () => {
      const client = await as(maria)
      const streams = await call(client, 'list_streams', { limit: 100 })
      assert.ok(streams.structured.data.some((s: any) => s.id === streamId))
      const posted = await call(client, 'post_message', { streamId, text: 'Hello **there** and `code`\nsame paragraph\n\n# not a heading', idempotencyKey: 'm-1' })
      assert.equal(posted.isError, false, posted.sentence)
      const blocks = posted.structured.content.blocks
      assert.equal(blocks.length, 2)
      assert.deepEqual(blocks[0].elements[0].children, [
        { type: 'text', text: 'Hello ' }, { type: 'text', text: 'there', style: { bold: true } }, { type: 'text', text: ' and ' }, { type: 'text', text: 'code', style: { code: true } }, { type: 'text', text: '\nsame paragraph' },
      ])
      assert.deepEqual(blocks[1].elements[0].children, [{ type: 'text', text: '# not a heading' }])
      const rtl = await call(client, 'post_message', { streamId, text: 'שלום *עולם*', format: 'plain' })
      assert.deepEqual(rtl.structured.content.blocks[0].elements[0], { type: 'paragraph', direction: 'rtl', children: [{ type: 'text', text: 'שלום *עולם*' }] })
      const replay = await call(client, 'post_message', { streamId, text: 'Hello **there** and `code`\nsame paragraph\n\n# not a heading', idempotencyKey: 'm-1' })
      assert.equal(replay.structured.id, posted.structured.id)
      assert.equal((await call(client, 'post_message', { streamId, text: 'other', idempotencyKey: 'm-1' })).body.type, 'urn:tandem:problem:idempotency-key-reused')
      const messages = await call(client, 'read_messages', { streamId, limit: 2 })
      assert.deepEqual(messages.structured.data.map((m: any) => m.id), [posted.structured.id, rtl.structured.id])
      assert.equal((await call(await as(stranger), 'read_messages', { streamId })).body.status, 404)

      const draft = await call(client, 'draft_cycle', { streamId, mode: 'generate', prompt: 'Triage a support ticket, then a person reviews the reply' })
      assert.equal(draft.isError, false, draft.sentence)
      const saved = await call(client, 'save_cycle', { streamId, triggerName: 'people-review', description: 'A person reviews', phasesTemplate: [{ id: randomUUID(), agentId: '00000000-0000-0000-0000-000000000000', goal: 'Review', instructions: 'Review it', autoAdvance: false, phaseName: 'Review', operatorPool: [] }], idempotencyKey: 'c-1' })
      assert.equal(saved.isError, false, saved.sentence)
      const cycles = await call(client, 'list_cycles', { streamId, limit: 100 })
      assert.ok(cycles.structured.data.some((c: any) => c.id === saved.structured.id))
      const started = await call(client, 'start_run', { streamId, cycleId: saved.structured.id, input: { ticket: 7 } })
      assert.equal(started.isError, false, started.sentence)
      const run = await call(client, 'get_run', { runId: started.structured.id })
      assert.deepEqual(run.structured.input, { ticket: 7 })
      const runs = await call(client, 'list_runs', { streamId, limit: 100 })
      assert.ok(runs.structured.data.some((r: any) => r.id === started.structured.id))
      assert.equal((await call(client, 'get_run', { runId: randomUUID() })).body.status, 404)
    })

    it('resources: the inbox listed, run and messages templates, -32002 for unknown or another workspace\'s; a subscription notifies', async () => {
      const connected = await connect(base, maria)
      open.push(connected)
      const { client } = connected
      const { resources } = await client.listResources()
      assert.deepEqual(resources.map((r) => r.uri), ['tandem://inbox'])
      const { resourceTemplates } = await client.listResourceTemplates()
      assert.deepEqual(resourceTemplates.map((r) => r.uriTemplate), ['tandem://runs/{runId}', 'tandem://streams/{streamId}/messages'])
      const inbox = await client.readResource({ uri: 'tandem://inbox' })
      assert.equal(inbox.contents[0]?.mimeType, 'application/json')
      const notFound = (error: unknown) => error instanceof McpError && error.code === -32002
      await assert.rejects(client.readResource({ uri: 'tandem://nothing' }), notFound)
      const strange = await as(stranger)
      await assert.rejects(strange.readResource({ uri: `tandem://streams/${streamId}/messages` }), notFound)

      const updated: string[] = []
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri))
      const uri = `tandem://streams/${streamId}/messages`
      await client.subscribeResource({ uri })
      // The GET stream opens after initialization; a message posted through REST reaches it.
      await waitFor(async () => {
        await send(app, 'POST', `/api/chat/streams/${streamId}/messages`, { content: { blocks: [{ type: 'rich_text', elements: [{ type: 'paragraph', children: [{ type: 'text', text: 'ping' }] }] }] } })
        return updated.includes(uri) || undefined
      }, 10000, 'a notification')
      const read = await client.readResource({ uri })
      assert.ok(JSON.parse(String((read.contents[0] as { text: string }).text)).data.length > 0)

      // The inbox: a new decision for maria (a gate of people's work, empty pool) notifies; so does the run.
      await client.subscribeResource({ uri: 'tandem://inbox' })
      const run = await startRun(app, streamId, await createCycle(app, streamId, [{ agentId: NIL, autoAdvance: false, name: 'Gate' }], `g-${randomUUID().slice(0, 8)}`))
      await client.subscribeResource({ uri: `tandem://runs/${run.id}` })
      await waitFor(async () => updated.includes('tandem://inbox') || undefined, 5000, 'the inbox notification')
      const waiting = await runIn(app, run.id, 'waiting')
      updated.length = 0
      await send(app, 'POST', `/api/runs/${run.id}/phases/${waiting.phases[0].id}/decision`, { decision: 'approve' }, maria)
      await waitFor(async () => (updated.includes(`tandem://runs/${run.id}`) && updated.includes('tandem://inbox')) || undefined, 5000, 'the run and inbox notifications')
      await client.unsubscribeResource({ uri: 'tandem://inbox' })

      // A stream created after the GET stream opened is followed from its first event, not at the next keep-alive
      // (15 s): its messages notify within 5 s.
      const later = await createStream(app)
      const laterUri = `tandem://streams/${later}/messages`
      await client.subscribeResource({ uri: laterUri })
      await send(app, 'POST', `/api/chat/streams/${later}/messages`, { content: { blocks: [{ type: 'rich_text', elements: [{ type: 'paragraph', children: [{ type: 'text', text: 'first' }] }] }] } })
      await waitFor(async () => updated.includes(laterUri) || undefined, 5000, 'the new stream\'s notification')
    })
  })
}
