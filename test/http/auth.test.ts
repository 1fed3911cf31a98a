// Authentication and workspaces: keys, the local loopback rule, and isolation between workspaces.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { ensureWorkspace, revokeApiKey } from '../../src/workspaces/store.js'
import { bearer, createKey } from '../auth.js'


for (const dialect of dialects()) {
  describe(`auth, local mode (${dialect})`, () => {
    let app: FastifyInstance
    before(async () => {
      app = await build(dialect, { TANDEM_AUTH: 'local' })
    })
    after(() => app.close())

    it('lets a loopback peer without a header act as the local admin of default', async () => {
      for (const remoteAddress of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1']) {
        const res = await app.inject({ method: 'GET', url: '/api/agents', remoteAddress })
        assert.equal(res.statusCode, 200, remoteAddress)
      }
    })

    it('refuses any other peer without a key; a forwarded request is refused whoever sends it', async () => {
      for (const remoteAddress of ['10.0.0.7', '192.168.1.2', '::2', '::ffff:10.0.0.1']) {
        const res = await app.inject({ method: 'GET', url: '/api/agents', remoteAddress })
        assert.equal(res.statusCode, 401, remoteAddress)
        assert.equal(res.json().type, 'urn:tandem:problem:unauthorized')
        assert.match(String(res.headers['www-authenticate']), /^Bearer/)
        const forwarded = await app.inject({ method: 'GET', url: '/api/agents', remoteAddress, headers: { 'x-forwarded-for': '127.0.0.1', forwarded: 'for=127.0.0.1' } })
        assert.equal(forwarded.statusCode, 403, remoteAddress)
        assert.equal(forwarded.json().type, 'urn:tandem:problem:proxied-request')
      }
    })

    it('a bad key is 401 even from loopback', async () => {
      for (const authorization of ['Bearer tdm_nope', 'Bearer ', 'Basic dXNlcjpwYXNz', 'tdm_abc']) {
        const res = await app.inject({ method: 'GET', url: '/api/agents', headers: { authorization } })
        assert.equal(res.statusCode, 401, authorization)
      }
    })

    it('health and docs need no key', async () => {
      for (const url of ['/healthz', '/readyz', '/openapi.json']) {
        assert.equal((await app.inject({ method: 'GET', url, remoteAddress: '10.0.0.7' })).statusCode, 200, url)
      }
    })
  })

  describe(`auth, required mode and workspaces (${dialect})`, () => {
    let app: FastifyInstance
    let alice: string
    let bob: string
    before(async () => {
      app = await build(dialect, { TANDEM_AUTH: 'required' })
      alice = (await createKey(app, { name: 'alice', role: 'admin' })).key
      bob = (await createKey(app, { workspace: 'other', name: 'bob', role: 'admin' })).key
    })
    after(() => app.close())

    it('demands a key on every /api request, loopback included', async () => {
      for (const [method, url] of [['GET', '/api/agents'], ['POST', '/api/agents'], ['GET', '/api/streams'], ['DELETE', '/api/agents/01890a5d-ac96-774b-bcce-b302099a8057']] as const) {
        const res = await app.inject({ method, url, remoteAddress: '127.0.0.1' })
        assert.equal(res.statusCode, 401, `${method} ${url}`)
      }
      assert.equal((await send(app, 'GET', '/api/agents', undefined, bearer(alice))).statusCode, 200)
      assert.equal((await send(app, 'GET', '/api/agents', undefined, { authorization: `bearer  ${alice}` })).statusCode, 200, 'scheme is case-insensitive')
    })

    it('stores only a hash of each key', async () => {
      const rows = await app.database.db.selectFrom('api_keys').selectAll().execute()
      const dump = JSON.stringify(rows)
      assert.ok(!dump.includes(alice) && !dump.includes(alice.slice(4)), 'the key itself is not stored')
      for (const row of rows) assert.match(row.key_hash, /^[0-9a-f]{64}$/)
    })

    it("hides another workspace's agents and streams behind 404", async () => {
      const agent = (await send(app, 'POST', '/api/agents', { name: 'alice-agent' }, bearer(alice))).json()
      const stream = (await send(app, 'POST', '/api/streams', { name: 'alice-stream' }, bearer(alice))).json()
      assert.equal((await send(app, 'GET', `/api/agents/${agent.id}`, undefined, bearer(bob))).statusCode, 404)
      assert.equal((await send(app, 'PATCH', `/api/agents/${agent.id}`, { name: 'stolen' }, bearer(bob))).statusCode, 404)
      assert.equal((await send(app, 'DELETE', `/api/agents/${agent.id}`, undefined, bearer(bob))).statusCode, 404)
      assert.equal((await send(app, 'GET', `/api/streams/${stream.id}`, undefined, bearer(bob))).statusCode, 404)
      const bobsList = (await send(app, 'GET', '/api/agents', undefined, bearer(bob))).json()
      assert.ok(!bobsList.data.some((a: { id: string }) => a.id === agent.id))
      assert.equal((await send(app, 'GET', `/api/agents/${agent.id}`, undefined, bearer(alice))).json().name, 'alice-agent')
    })

    it('a revoked key is 401 at once', async () => {
      const db = app.database.db
      const created = await createKey(app, { name: 'temp', role: 'member' })
      assert.equal((await send(app, 'GET', '/api/agents', undefined, bearer(created.key))).statusCode, 200)
      assert.equal(await revokeApiKey(db, created.id), true)
      assert.equal((await send(app, 'GET', '/api/agents', undefined, bearer(created.key))).statusCode, 401)
    })
  })
}

for (const dialect of dialects()) {
  describe(`access control changes nothing (${dialect})`, () => {
    let app: FastifyInstance
    before(async () => {
      app = await build(dialect, { TANDEM_AUTH: 'required' })
    })
    after(() => app.close())

    it('no key, a malformed, unknown, revoked or foreign key, and a forged loopback claim: 401/404, nothing written', async () => {
      const db = app.database.db
      const home = await ensureWorkspace(db, 'default')
      const owner = (await createKey(app, { workspaceId: home, name: 'owner', role: 'admin' })).headers
      const revoked = await createKey(app, { workspaceId: home, name: 'revoked', role: 'admin' })
      await revokeApiKey(db, revoked.id)
      const foreign = (await createKey(app, { workspace: 'foreign', name: 'foreign', role: 'admin' })).key
      const agent = (await send(app, 'POST', '/api/agents', { name: 'Guarded' }, owner)).json()
      const stream = (await send(app, 'POST', '/api/streams', { name: 'guarded' }, owner)).json()
      const content = { blocks: [{ type: 'rich_text', elements: [{ type: 'paragraph', children: [{ type: 'text', text: 'mine' }] }] }] }
      const message = (await send(app, 'POST', `/api/chat/streams/${stream.id}/messages`, { content }, owner)).json()
      const snapshot = async () => JSON.stringify([
        (await send(app, 'GET', `/api/agents/${agent.id}`, undefined, owner)).body,
        (await send(app, 'GET', '/api/agents?limit=100', undefined, owner)).body,
        (await send(app, 'GET', `/api/chat/messages/${message.id}`, undefined, owner)).body,
        (await send(app, 'GET', `/api/chat/messages/${message.id}/revisions`, undefined, owner)).body,
      ])
      const before = await snapshot()
      const callers: Array<[string, Record<string, string>, number]> = [
        ['no key', {}, 401],
        ['malformed header', { authorization: 'Token abc' }, 401],
        ['malformed key', { authorization: 'Bearer not-a-key' }, 401],
        ['unknown key', { authorization: `Bearer tdm_${'A'.repeat(43)}` }, 401],
        ['revoked key', bearer(revoked.key), 401],
        ['forged loopback', { 'x-forwarded-for': '127.0.0.1', forwarded: 'for=127.0.0.1' }, 401],
        ["another workspace's key", bearer(foreign), 404],
      ]
      for (const [label, headers, status] of callers) {
        const attempts = [
          await send(app, 'PATCH', `/api/agents/${agent.id}`, { name: 'Taken' }, headers),
          await send(app, 'DELETE', `/api/agents/${agent.id}`, undefined, headers),
          await send(app, 'PATCH', `/api/chat/messages/${message.id}`, { content: { blocks: [{ type: 'rich_text', elements: [] }] } }, headers),
          await send(app, 'POST', `/api/chat/streams/${stream.id}/messages`, { content }, headers),
        ]
        assert.deepEqual(attempts.map((r) => r.statusCode), [status, status, status, status], label)
        for (const res of attempts) assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8', label)
      }
      assert.equal(await snapshot(), before, 'nothing changed')
    })
  })
}
