// The MCP server's bounds: /api's rate limits, one budget shared with /api (each /mcp request counts once, its
// in-process call of the twin not again); a body over 1 MiB; the notification stream's connection share; an idle
// session's end; at most MAX_SESSIONS_PER_KEY sessions per key (a new one ends the least recently used).
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { keyFor } from '../schedules/setup.js'
import { keyHashOf, MAX_SESSIONS_PER_KEY, openSession } from '../../src/mcp-server/sessions.js'
import { listen } from './setup.js'

const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }
const CALL = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'whoami', arguments: {} } }

for (const dialect of dialects()) {
  describe(`MCP server: bounds (${dialect})`, () => {
    let app: FastifyInstance
    let base: string
    let maria: Record<string, string>
    before(async () => {
      app = await build(dialect, { TANDEM_AUTH: 'required', TANDEM_RATE_LIMIT: '6/minute', TANDEM_PEER_RATE_LIMIT: '1000/minute', TANDEM_MAX_STREAMS_PER_KEY: '1' })
      base = await listen(app)
      maria = await keyFor(app, 'maria', 'member')
    })
    after(async () => app.close())

    const post = (headers: Record<string, string>, body: unknown) =>
      fetch(`${base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...maria, ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) })

    it('one rate-limit budget with /api: each /mcp request counts once; past it 429 with Retry-After', async () => {
      const opened = await post({}, INIT)
      assert.equal(opened.status, 200)
      const session = { 'mcp-session-id': opened.headers.get('mcp-session-id')! }
      // 1 (initialize) + 2 tool calls + 3 /api requests = 6: a tool call's twin does not count a second time.
      for (let i = 0; i < 2; i++) assert.equal((await post(session, CALL)).status, 200)
      for (let i = 0; i < 3; i++) assert.equal((await send(app, 'GET', '/api/me', undefined, maria)).statusCode, 200)
      const refused = await post(session, CALL)
      assert.equal(refused.status, 429)
      assert.ok(Number(refused.headers.get('retry-after')) >= 1)
      assert.equal(((await refused.json()) as { type: string }).type, 'urn:tandem:problem:rate-limited')
      assert.equal((await send(app, 'GET', '/api/me', undefined, maria)).statusCode, 429, '/api shares the spent budget')
    })

    it('a body over 1 MiB is a 413 problem; the notification stream takes a connection share (429 past it)', async () => {
      const tom = await keyFor(app, 'tom', 'member')
      const big = await fetch(`${base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...tom }, body: JSON.stringify({ ...INIT, pad: 'x'.repeat(1024 * 1024) }) })
      assert.equal(big.status, 413)
      const opened = await fetch(`${base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...tom }, body: JSON.stringify(INIT) })
      const headers = { ...tom, accept: 'text/event-stream', 'mcp-session-id': opened.headers.get('mcp-session-id')! }
      const controller = new AbortController()
      const first = await fetch(`${base}/mcp`, { headers, signal: controller.signal })
      assert.equal(first.status, 200)
      assert.match(first.headers.get('content-type') ?? '', /text\/event-stream/)
      const second = await fetch(`${base}/mcp`, { headers })
      assert.equal(second.status, 429)
      controller.abort()
    })

    it('sessions: an idle one is a 404; past MAX_SESSIONS_PER_KEY a new one ends the least recently used', async () => {
      const ann = await keyFor(app, 'ann', 'member')
      const db = app.database.db
      const me = (await send(app, 'GET', '/api/me', undefined, ann)).json()
      const keyHash = keyHashOf(ann.authorization)
      const ids: string[] = []
      for (let i = 0; i < MAX_SESSIONS_PER_KEY; i++) {
        ids.push(await openSession(db, { workspaceId: me.workspaceId, principalId: me.principalId, keyHash, protocolVersion: '2025-11-25' }))
        // Distinct times of last use: the first is the least recently used.
        await db.updateTable('mcp_sessions').set({ last_used_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString() }).where('id', '=', ids[i]!).execute()
      }
      const count = async () => Number((await db.selectFrom('mcp_sessions').select((eb) => eb.fn.countAll().as('n')).where('key_hash', '=', keyHash).executeTakeFirstOrThrow()).n)
      assert.equal(await count(), MAX_SESSIONS_PER_KEY)
      await openSession(db, { workspaceId: me.workspaceId, principalId: me.principalId, keyHash, protocolVersion: '2025-11-25' })
      assert.equal(await count(), MAX_SESSIONS_PER_KEY)
      assert.equal(await db.selectFrom('mcp_sessions').select('id').where('id', '=', ids[0]!).executeTakeFirst(), undefined, 'the least recently used ended')
      // ids[1] was last used long before TANDEM_MCP_SESSION_IDLE_S (a day) ago: a 404, and it is gone.
      const idle = await fetch(`${base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...ann, 'mcp-session-id': ids[1]! }, body: JSON.stringify(CALL) })
      assert.equal(idle.status, 404)
      assert.equal(await db.selectFrom('mcp_sessions').select('id').where('id', '=', ids[1]!).executeTakeFirst(), undefined)
    })
  })
}
