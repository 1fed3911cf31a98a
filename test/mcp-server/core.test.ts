// The MCP server through the official SDK client on a listening server: the handshake (serverInfo, instructions,
// capabilities), the 17 tools with their annotations and output schemas, the inbox and decision tools (happy
// paths and refusals: pool, quorum, twice, other workspace, agent key, no key, bad arguments) with their effects
// read back through REST, and `via` on what was decided.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { randomUUID } from 'node:crypto'
import { McpError } from '@modelcontextprotocol/sdk/types.js'
import { build, dialects, send } from '../helpers.js'
import { ensureWorkspace } from '../../src/workspaces/store.js'
import { keyFor, waitingStream } from '../schedules/setup.js'
import { createStream, getRun, NIL, runIn } from '../runs/setup.js'
import { call, connect, listen, type Connected } from './setup.js'
import { createKey } from '../auth.js'

const TOOL_NAMES = [
  'whoami', 'list_inbox', 'claim_item', 'release_item', 'decide_phase', 'decide_tool_call', 'answer_question', 'list_streams', 'read_messages',
  'post_message', 'list_cycles', 'draft_cycle', 'save_cycle', 'start_run', 'list_runs', 'get_run', 'list_tool_calls',
]

for (const dialect of dialects()) {
  describe(`MCP server: core (${dialect})`, () => {
    let app: FastifyInstance
    let base: string
    let maria: Record<string, string>
    let tom: Record<string, string>
    let boss: Record<string, string>
    let stranger: Record<string, string>
    let agent: Record<string, string>
    const open: Connected[] = []
    const as = async (headers: Record<string, string>) => {
      const connected = await connect(base, headers)
      open.push(connected)
      // Listing the tools makes the client check every structuredContent against its tool's outputSchema.
      await connected.client.listTools()
      return connected.client
    }

    before(async () => {
      app = await build(dialect)
      base = await listen(app)
      maria = await keyFor(app, 'maria', 'member')
      tom = await keyFor(app, 'tom', 'member')
      boss = await keyFor(app, 'boss', 'admin')
      stranger = await keyFor(app, 'maria', 'admin', 'elsewhere')
      const workspaceId = await ensureWorkspace(app.database.db, 'default')
      const agentId = (await send(app, 'POST', '/api/agents', { name: 'Worker', providerType: 'custom_token_only' })).json().id
      agent = (await createKey(app, { workspaceId, name: 'worker', agentId })).headers
    })
    after(async () => {
      for (const { client } of open) await client.close()
      await app.close()
    })

    async function waitingRun(pool: string[], quorum?: number) {
      const streamId = await createStream(app, `s-${randomUUID().slice(0, 8)}`)
      const trigger = `t-${randomUUID().slice(0, 8)}`
      const res = await send(app, 'POST', `/api/cycles/streams/${streamId}/cycles`, {
        triggerName: trigger, description: 'Review it',
        phasesTemplate: [{ id: randomUUID(), agentId: NIL, goal: 'Check the refund', instructions: 'Check', autoAdvance: false, phaseName: 'Review', operatorPool: pool }],
        ...(quorum ? { policy: { decision: { quorum } } } : {}),
      })
      assert.equal(res.statusCode, 201, res.body)
      const [run] = (await send(app, 'POST', `/api/streams/${streamId}/triggers/${trigger}`, {})).json().runs
      return runIn(app, run.id, 'waiting')
    }

    it('initializes a session: serverInfo tandem, instructions naming the caller, tools and resources with subscribe', async () => {
      const client = await as(maria)
      assert.equal(client.getServerVersion()?.name, 'tandem')
      assert.match(client.getInstructions() ?? '', /@maria \(member\)/)
      assert.match(client.getInstructions() ?? '', /list_inbox/)
      assert.deepEqual(client.getServerCapabilities()?.resources, { subscribe: true })
      const { tools } = await client.listTools()
      assert.deepEqual(tools.map((t) => t.name), TOOL_NAMES)
      for (const tool of tools) {
        assert.ok(tool.title, tool.name)
        assert.equal(tool.inputSchema.type, 'object')
        assert.equal((tool.inputSchema as { additionalProperties?: boolean }).additionalProperties, false, tool.name)
        assert.equal(tool.outputSchema?.type, 'object', tool.name)
        assert.deepEqual(Object.keys(tool.annotations ?? {}).filter((k) => k.endsWith('Hint')).sort(), ['destructiveHint', 'idempotentHint', 'openWorldHint', 'readOnlyHint'], tool.name)
      }
      const decide = tools.find((t) => t.name === 'decide_phase')!
      assert.deepEqual([decide.annotations?.readOnlyHint, decide.annotations?.destructiveHint, decide.annotations?.idempotentHint, decide.annotations?.openWorldHint], [false, true, false, true])
      const who = await call(client, 'whoami')
      assert.equal(who.isError, false)
      assert.equal(who.structured.handle, 'maria')
      assert.deepEqual(who.structured, (await send(app, 'GET', '/api/me', undefined, maria)).json())
    })

    it('an unknown tool is a JSON-RPC error -32602; bad arguments are a tool error naming each field', async () => {
      const client = await as(maria)
      await assert.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }), (error: unknown) => error instanceof McpError && error.code === -32602)
      const bad = await call(client, 'decide_phase', { runId: 'nope', phaseRunId: randomUUID(), decision: 'approve', note: '', bogus: 1 })
      assert.equal(bad.isError, true)
      assert.equal(bad.body.type, 'urn:tandem:problem:validation-error')
      assert.deepEqual(bad.body.errors.map((e: { pointer: string }) => e.pointer).sort(), ['/bogus', '/note', '/runId'])
    })

    it('who may connect: no key 401 with WWW-Authenticate, an agent key 403, a session of another key 404, no session 400', async () => {
      const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }
      const post = (headers: Record<string, string>, body: unknown = init) =>
        fetch(`${base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: JSON.stringify(body) })
      // Local mode (the tests' default) lets a key-less loopback request act as `local`, as on /api; a bad key is 401.
      assert.equal((await post({})).status, 200)
      const bad = await post({ authorization: 'Bearer tdm_nope' })
      assert.equal(bad.status, 401)
      assert.equal(bad.headers.get('www-authenticate'), 'Bearer realm="tandem"')
      assert.equal(((await bad.json()) as { status: number }).status, 401)
      assert.equal((await post(agent)).status, 403)
      await assert.rejects(connect(base, agent))
      const opened = await post(maria)
      assert.equal(opened.status, 200)
      const sessionId = opened.headers.get('mcp-session-id')!
      assert.ok(sessionId)
      const list = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }
      assert.equal((await post({ ...tom, 'mcp-session-id': sessionId }, list)).status, 404)
      assert.equal((await post(maria, list)).status, 400)
      assert.equal((await post({ ...maria, 'mcp-session-id': sessionId }, list)).status, 200)
      assert.equal((await post({ ...maria, origin: 'http://evil.example' }, list)).status, 403)
      assert.equal((await fetch(`${base}/mcp`, { method: 'DELETE', headers: { ...maria, 'mcp-session-id': sessionId } })).status, 204)
      assert.equal((await post({ ...maria, 'mcp-session-id': sessionId }, list)).status, 404)
      assert.equal((await fetch(`${base}/.well-known/oauth-protected-resource`)).status, 404)
    })

    it('with TANDEM_AUTH=required, no key is a 401 naming no resource_metadata', async () => {
      const strict = await build(dialect, { TANDEM_AUTH: 'required' })
      try {
        const url = await listen(strict)
        const none = await fetch(`${url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' })
        assert.equal(none.status, 401)
        assert.equal(none.headers.get('www-authenticate'), 'Bearer realm="tandem"')
        await assert.rejects(connect(url, {}))
      } finally {
        await strict.close()
      }
    })

    it('list_inbox, claim_item, release_item, decide_phase: the pool, twice, another workspace; the decision reads back via mcp', async () => {
      const run = await waitingRun(['@maria'])
      const phase = run.phases[0]
      const client = await as(maria)
      const inbox = await call(client, 'list_inbox', { kind: 'decision', streamId: run.streamId })
      assert.equal(inbox.isError, false)
      assert.deepEqual(inbox.structured.data.map((i: { phaseRunId: string }) => i.phaseRunId), [phase.id])
      assert.deepEqual(inbox.structured, (await send(app, 'GET', `/api/me/inbox?kind=decision&streamId=${run.streamId}`, undefined, maria)).json())
      assert.equal((await call(client, 'list_inbox', { kind: 'question', streamId: run.streamId })).structured.data.length, 0)

      const claimed = await call(client, 'claim_item', { runId: run.id, phaseRunId: phase.id })
      assert.equal(claimed.structured.claimedBy, 'maria')
      assert.equal((await send(app, 'GET', `/api/me/inbox?claimed=me`, undefined, maria)).json().data.length, 1)
      assert.deepEqual((await call(client, 'release_item', { runId: run.id, phaseRunId: phase.id })).structured, { runId: run.id, phaseRunId: phase.id, claimedBy: null })
      assert.equal((await send(app, 'GET', `/api/me/inbox?claimed=me`, undefined, maria)).json().data.length, 0)

      const outside = await call(await as(tom), 'decide_phase', { runId: run.id, phaseRunId: phase.id, decision: 'approve' })
      assert.equal(outside.isError, true)
      assert.equal(outside.body.status, 403)
      assert.equal(outside.sentence, 'Only @maria may decide phase "Review".')
      assert.equal(outside.structured, undefined)
      const elsewhere = await call(await as(stranger), 'decide_phase', { runId: run.id, phaseRunId: phase.id, decision: 'approve' })
      assert.equal(elsewhere.body.status, 404)
      assert.equal((await getRun(app, run.id)).status, 'waiting', 'refusals changed nothing')

      const decided = await call(client, 'decide_phase', { runId: run.id, phaseRunId: phase.id, decision: 'approve', note: 'Fine' })
      assert.equal(decided.isError, false, decided.sentence)
      assert.equal(decided.structured.id, run.id)
      assert.match(decided.sentence, /approved phase "Review"/)
      const again = await call(client, 'decide_phase', { runId: run.id, phaseRunId: phase.id, decision: 'approve' })
      assert.equal(again.body.type, 'urn:tandem:problem:not-awaiting-decision')
      const read = await getRun(app, run.id)
      assert.deepEqual(decided.structured, read, 'the body REST answers')
      assert.equal(read.phases[0].decisions.length, 1)
      assert.deepEqual([read.phases[0].decisions[0].via, read.phases[0].decisions[0].handle], ['mcp', 'maria'])
    })

    it('a quorum: one approval each, whichever way it came (already-approved), and a revise without a note is 422', async () => {
      const run = await waitingRun([], 2)
      const phase = run.phases[0]
      const client = await as(maria)
      assert.equal((await send(app, 'POST', `/api/runs/${run.id}/phases/${phase.id}/decision`, { decision: 'approve' }, { ...maria, 'tandem-client': 'console' })).statusCode, 200)
      const twice = await call(client, 'decide_phase', { runId: run.id, phaseRunId: phase.id, decision: 'approve' })
      assert.equal(twice.body.type, 'urn:tandem:problem:already-approved')
      const noNote = await call(await as(tom), 'decide_phase', { runId: run.id, phaseRunId: phase.id, decision: 'revise' })
      assert.equal(noNote.body.status, 422)
      const revise = await call(await as(boss), 'decide_phase', { runId: run.id, phaseRunId: phase.id, decision: 'reject', override: true })
      assert.equal(revise.isError, false, revise.sentence)
      const read = await getRun(app, run.id)
      assert.deepEqual(read.phases[0].decisions.map((d: { via: string }) => d.via), ['console', 'mcp'])
    })

    it('GET /api/me/inbox refuses a filter it does not know (400), and narrows by kind, streamId and claimed=me', async () => {
      for (const query of ['kind=bogus', 'streamId=nope', 'claimed=you', 'other=1']) {
        assert.equal((await send(app, 'GET', `/api/me/inbox?${query}`, undefined, maria)).statusCode, 400, query)
      }
      const { streamId } = await waitingStream(app, `w-${randomUUID().slice(0, 6)}`)
      assert.equal((await send(app, 'GET', `/api/me/inbox?streamId=${streamId}`, undefined, maria)).json().data.length, 0)
    })
  })
}
