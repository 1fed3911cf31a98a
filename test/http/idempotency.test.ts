// Idempotency-Key on creating POSTs (Stripe semantics), on each database: replays, mismatches, scope,
// expiry after 24 hours, concurrency, and replays that survive a restart.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { ensureWorkspace } from '../../src/workspaces/store.js'
import { IDEMPOTENCY_TTL_MS } from '../../src/http/idempotency.js'
import { purgeExpiredKeys } from '../../src/idempotency/store.js'
import { TEST_SECRET_KEY, build, dialects, freshDatabase, pointers, send } from '../helpers.js'
import { createKey } from '../auth.js'

const key = (k: string, extra: Record<string, string> = {}) => ({ 'idempotency-key': k, ...extra })

for (const dialect of dialects()) {
  describe(`idempotency keys (${dialect})`, () => {
    let app: FastifyInstance
    const count = async () => (await send(app, 'GET', '/api/agents?limit=100')).json().data.length as number
    before(async () => {
      app = await build(dialect)
    })
    after(() => app.close())

    it('replays the first response for a retry with the same key and body, creating once', async () => {
      const before = await count()
      const first = await send(app, 'POST', '/api/agents', { name: 'Once' }, key('create-once'))
      assert.equal(first.statusCode, 201)
      assert.equal(first.headers['idempotent-replayed'], undefined)
      const retry = await send(app, 'POST', '/api/agents', { name: 'Once' }, key('create-once'))
      assert.equal(retry.statusCode, 201)
      assert.equal(retry.headers['idempotent-replayed'], 'true')
      assert.equal(retry.headers.location, first.headers.location)
      assert.equal(retry.headers['content-type'], first.headers['content-type'])
      assert.equal(retry.body, first.body)
      assert.equal(await count(), before + 1)
    })

    it('the same key with a different body is a 422 and creates nothing', async () => {
      await send(app, 'POST', '/api/agents', { name: 'A' }, key('reused'))
      const before = await count()
      const res = await send(app, 'POST', '/api/agents', { name: 'B' }, key('reused'))
      assert.equal(res.statusCode, 422)
      assert.equal(res.json().type, 'urn:tandem:problem:idempotency-key-reused')
      assert.equal(await count(), before)
    })

    it('keys belong to a workspace', async () => {
      const other = (await createKey(app, { workspace: 'idem-other', name: 'o', role: 'admin' })).headers
      const mine = await send(app, 'POST', '/api/streams', { name: 'S' }, key('shared-key'))
      const theirs = await send(app, 'POST', '/api/streams', { name: 'S' }, key('shared-key', other))
      assert.equal(theirs.statusCode, 201)
      assert.equal(theirs.headers['idempotent-replayed'], undefined)
      assert.notEqual(theirs.json().id, mine.json().id)
    })

    it('keys belong to the principal that sent them, not to the whole workspace', async () => {
      const db = app.database.db
      const workspaceId = await ensureWorkspace(db, 'idem-members')
      const alice = (await createKey(app, { workspaceId, name: 'alice', role: 'member' })).headers
      const bob = (await createKey(app, { workspaceId, name: 'bob', role: 'member' })).headers
      const stream = (await send(app, 'POST', '/api/streams', { name: 'Members' }, alice)).json().id
      const body = { content: { blocks: [{ type: 'rich_text', elements: [] }] } }
      const url = `/api/chat/streams/${stream}/messages`
      const hers = await send(app, 'POST', url, body, key('retry-1', alice))
      const his = await send(app, 'POST', url, body, key('retry-1', bob))
      assert.equal(hers.statusCode, 201)
      assert.equal(his.statusCode, 201)
      assert.equal(his.headers['idempotent-replayed'], undefined)
      assert.notEqual(his.json().id, hers.json().id)
      assert.notEqual(his.json().authorId, hers.json().authorId)
      const again = await send(app, 'POST', url, body, key('retry-1', bob))
      assert.equal(again.headers['idempotent-replayed'], 'true')
      assert.equal(again.json().id, his.json().id)
    })

    it('purges expired keys in batches, keeping live ones', async () => {
      const db = app.database.db
      const old = new Date(Date.now() - IDEMPOTENCY_TTL_MS - 60_000).toISOString()
      const rows = Array.from({ length: 250 }, (_, i) => ({
        workspace_id: 'w', principal_id: `p${i % 3}`, key: `old-${i}`, request_hash: 'h', claim_id: `c${i}`, status: 201, headers: '{}', body: '{}', created_at: old,
      }))
      await db.insertInto('idempotency_requests').values(rows).execute()
      await send(app, 'POST', '/api/agents', { name: 'Live' }, key('live-key'))
      const live = await db.selectFrom('idempotency_requests').select('key').where('created_at', '>=', old).where('key', 'not like', 'old-%').execute()
      const deleted = await purgeExpiredKeys(db, new Date(Date.now() - IDEMPOTENCY_TTL_MS).toISOString(), 100)
      assert.equal(deleted, 250)
      const left = await db.selectFrom('idempotency_requests').select('key').execute()
      assert.equal(left.filter((r) => r.key.startsWith('old-')).length, 0)
      assert.equal(left.length, live.length)
      assert.ok(left.some((r) => r.key === 'live-key'))
    })

    it('rejects malformed keys with a pointer at the header', async () => {
      for (const bad of ['x'.repeat(256), 'has space', 'ünïcode']) {
        const res = await app.inject({ method: 'POST', url: '/api/agents', payload: '{"name":"k"}', headers: { 'content-type': 'application/json', 'idempotency-key': bad } })
        assert.equal(res.statusCode, 400, bad)
        assert.deepEqual(pointers(res), ['/headers/idempotency-key'])
      }
      assert.equal((await send(app, 'POST', '/api/agents', { name: 'k' }, key('x'.repeat(255)))).statusCode, 201)
    })

    it('a request refused by validation is not remembered; one refused by the handler is', async () => {
      assert.equal((await send(app, 'POST', '/api/agents', { name: '' }, key('after-400'))).statusCode, 400)
      assert.equal((await send(app, 'POST', '/api/agents', { name: 'ok' }, key('after-400'))).statusCode, 201)
      const unknownStream = '/api/chat/streams/01890a5d-ac96-774b-bcce-b302099a8057/messages'
      const body = { content: { blocks: [{ type: 'rich_text', elements: [] }] } }
      assert.equal((await send(app, 'POST', unknownStream, body, key('after-404'))).statusCode, 404)
      const replay = await send(app, 'POST', unknownStream, body, key('after-404'))
      assert.equal(replay.statusCode, 404)
      assert.equal(replay.headers['idempotent-replayed'], 'true')
      assert.equal(replay.headers['content-type'], 'application/problem+json; charset=utf-8')
    })

    it('keys expire after 24 hours', async () => {
      await send(app, 'POST', '/api/agents', { name: 'Old' }, key('expiring'))
      const dayAgo = new Date(Date.now() - 24 * 60 * 60 * 1000 - 1000).toISOString()
      await app.database.db.updateTable('idempotency_requests').set({ created_at: dayAgo }).where('key', '=', 'expiring').execute()
      const res = await send(app, 'POST', '/api/agents', { name: 'New' }, key('expiring'))
      assert.equal(res.statusCode, 201)
      assert.equal(res.json().name, 'New')
    })

    it('concurrent requests with one key create once', async () => {
      const before = await count()
      const responses = await Promise.all(Array.from({ length: 6 }, () => send(app, 'POST', '/api/agents', { name: 'Race' }, key('race'))))
      for (const res of responses) assert.ok([201, 409].includes(res.statusCode), String(res.statusCode))
      assert.equal(await count(), before + 1)
      const created = responses.filter((r) => r.statusCode === 201).map((r) => r.json().id)
      assert.equal(new Set(created).size, 1)
    })

    it('replays survive a restart', async () => {
      const database = await freshDatabase(dialect)
      const config = loadConfig({ LOG_LEVEL: 'silent', TANDEM_SECRET_KEY: TEST_SECRET_KEY, TANDEM_WORKERS: '0', DATABASE_URL: database.url })
      try {
        const first = await buildApp(config, { connect: { schema: database.schema } })
        const created = await send(first, 'POST', '/api/agents', { name: 'Durable' }, key('durable'))
        await first.close()
        const second = await buildApp(config, { connect: { schema: database.schema } })
        const replay = await send(second, 'POST', '/api/agents', { name: 'Durable' }, key('durable'))
        await second.close()
        assert.equal(replay.headers['idempotent-replayed'], 'true')
        assert.equal(replay.body, created.body)
      } finally {
        await database.drop()
      }
    })
  })
}
