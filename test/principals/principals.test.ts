// Principals and handles: keys of one principal, agent keys, GET /api/me, admin-only agent writes, agent keys
// refused on every route but their own, and the migration that gave existing keys handles.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, freshDatabase, send } from '../helpers.js'
import { ensureWorkspace } from '../../src/workspaces/store.js'
import { KeyRequestError, LOCAL_ADMIN_ID, createApiKey } from '../../src/principals/store.js'
import { createKeyCommand, UsageError } from '../../src/principals/cli.js'
import { defaultHandle, normalizeHandle } from '../../src/principals/handles.js'
import { connect } from '../../src/db/connect.js'
import { migrateTo, migrateToLatest } from '../../src/db/migrate.js'
import { bearer, createKey } from '../auth.js'

const SOME_ID = '01890a5d-ac96-774b-bcce-b302099a8057'

describe('handles', () => {
  it('normalizes an operatorPool entry: one leading @ dropped, lower case', () => {
    assert.equal(normalizeHandle('@Maria'), 'maria')
    assert.equal(normalizeHandle('LEE'), 'lee')
    assert.equal(normalizeHandle('@@x'), '@x')
  })

  it('makes a valid handle of any name', () => {
    assert.equal(defaultHandle('Maria López'), 'maria-l-pez')
    assert.equal(defaultHandle('ops.bot_2'), 'ops.bot_2')
    assert.equal(defaultHandle('  Bob'), 'bob')
    assert.equal(defaultHandle('😀'), 'key')
    assert.equal(defaultHandle('x'.repeat(100)).length, 64)
  })
})

for (const dialect of dialects()) {
  describe(`the local admin (${dialect})`, () => {
    let app: FastifyInstance
    before(async () => {
      app = await build(dialect, { TANDEM_AUTH: 'local' })
    })
    after(() => app.close())

    it('is the admin principal with handle local in default', async () => {
      const me = (await send(app, 'GET', '/api/me')).json()
      assert.deepEqual(me, { principalId: LOCAL_ADMIN_ID, handle: 'local', role: 'admin', workspaceId: await ensureWorkspace(app.database.db, 'default'), agentId: null })
      const row = await app.database.db.selectFrom('principals').selectAll().where('id', '=', LOCAL_ADMIN_ID).executeTakeFirstOrThrow()
      assert.equal(row.handle, 'local')
    })
  })

  describe(`principals and keys (${dialect})`, () => {
    let app: FastifyInstance
    let workspaceId: string
    let admin: Record<string, string>
    let member: Record<string, string>
    before(async () => {
      app = await build(dialect, { TANDEM_AUTH: 'required' })
      workspaceId = await ensureWorkspace(app.database.db, 'default')
      admin = (await createKey(app, { workspaceId, name: 'Ada Admin', role: 'admin' })).headers
      member = (await createKey(app, { workspaceId, name: 'Maria López' })).headers
    })
    after(() => app.close())

    it('GET /api/me names the caller', async () => {
      const me = (await send(app, 'GET', '/api/me', undefined, member)).json()
      assert.deepEqual(Object.keys(me).sort(), ['agentId', 'handle', 'principalId', 'role', 'workspaceId'])
      assert.equal(me.handle, 'maria-l-pez')
      assert.equal(me.role, 'member')
      assert.equal(me.workspaceId, workspaceId)
      assert.equal(me.agentId, null)
      assert.equal((await send(app, 'GET', '/api/me', undefined, admin)).json().role, 'admin')
      assert.equal((await send(app, 'GET', '/api/me')).statusCode, 401)
    })

    it('an existing handle gets another key of the same principal', async () => {
      const db = app.database.db
      const first = await createApiKey(db, { workspaceId, name: 'Lee laptop', handle: 'lee' })
      const second = await createApiKey(db, { workspaceId, name: 'Lee phone', handle: '@LEE' })
      assert.equal(first.principalId, second.principalId)
      assert.notEqual(first.key, second.key)
      const byName = await createApiKey(db, { workspaceId, name: 'Lee' })
      assert.equal(byName.principalId, first.principalId, 'the default handle of "Lee" is lee')
      const [a, b] = await Promise.all([bearer(first.key), bearer(second.key)].map(async (h) => (await send(app, 'GET', '/api/me', undefined, h)).json()))
      assert.deepEqual(a, b)
      // The same handle in another workspace is someone else.
      const elsewhere = await createApiKey(db, { workspaceId: await ensureWorkspace(db, 'elsewhere'), name: 'Lee', handle: 'lee' })
      assert.notEqual(elsewhere.principalId, first.principalId)
    })

    it('refuses a key that would change who a handle is, and makes nothing', async () => {
      const db = app.database.db
      const count = async () => (await db.selectFrom('api_keys').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n
      const before = await count()
      await assert.rejects(createApiKey(db, { workspaceId, name: 'x', handle: 'maria-l-pez', role: 'admin' }), /is a member/)
      await assert.rejects(createApiKey(db, { workspaceId, name: 'x', handle: '-bad' }), KeyRequestError)
      await assert.rejects(createApiKey(db, { workspaceId, name: 'x', handle: 'a'.repeat(65) }), /must match/)
      await assert.rejects(createApiKey(db, { workspaceId, name: 'x', agentId: SOME_ID }), /does not exist in this workspace/)
      await assert.rejects(createApiKey(db, { workspaceId, name: 'x', handle: 'local', role: 'member' }), /is an admin/)
      assert.equal(String(await count()), String(before))
      // Handle bounds: 64 characters is fine.
      assert.equal((await createApiKey(db, { workspaceId, name: 'x', handle: 'a'.repeat(64) })).principal.handle, 'a'.repeat(64))
    })

    it('the local admin holds the handle local in default', async () => {
      const key = await createApiKey(app.database.db, { workspaceId, name: 'local admin key', handle: 'local', role: 'admin' })
      assert.equal(key.principalId, LOCAL_ADMIN_ID)
      assert.equal(key.principal.role, 'admin')
    })

    it('agent writes are admin-only; members read agents', async () => {
      const agent = (await send(app, 'POST', '/api/agents', { name: 'Writer' }, admin)).json()
      const attempts = [
        await send(app, 'POST', '/api/agents', { name: 'Mine' }, member),
        await send(app, 'POST', '/api/agents', { name: '' }, member), // refused before validation
        await send(app, 'PATCH', `/api/agents/${agent.id}`, { endpointUrl: 'https://evil.example/' }, member),
        await send(app, 'DELETE', `/api/agents/${agent.id}`, undefined, member),
        await send(app, 'DELETE', `/api/agents/${SOME_ID}`, undefined, member),
      ]
      for (const res of attempts) {
        assert.equal(res.statusCode, 403, res.body)
        assert.equal(res.json().type, 'urn:tandem:problem:forbidden')
        assert.match(res.json().detail, /Only admins may create, change or delete agents/)
      }
      const read = await send(app, 'GET', `/api/agents/${agent.id}`, undefined, member)
      assert.equal(read.statusCode, 200)
      assert.deepEqual(read.json(), agent, 'unchanged')
      assert.equal((await send(app, 'GET', '/api/agents', undefined, member)).json().data.filter((a: { name: string }) => a.name === 'Mine').length, 0)
      assert.equal((await send(app, 'PATCH', `/api/agents/${agent.id}`, { name: 'Renamed' }, admin)).statusCode, 200)
      assert.equal((await send(app, 'DELETE', `/api/agents/${agent.id}`, undefined, admin)).statusCode, 204)
    })

    it('agent keys: bound to an agent of the workspace, GET /api/me only (and the task routes), dead with the agent', async () => {
      const db = app.database.db
      const agent = (await send(app, 'POST', '/api/agents', { name: 'Triage bot', providerType: 'custom_token_only' }, admin)).json()
      const foreignWorkspace = await ensureWorkspace(db, 'foreign')
      await assert.rejects(createApiKey(db, { workspaceId: foreignWorkspace, name: 'x', agentId: agent.id }), /does not exist in this workspace/)
      await assert.rejects(createApiKey(db, { workspaceId, name: 'x', handle: 'lee', agentId: agent.id }), /belongs to a member/)
      const created = await createApiKey(db, { workspaceId, name: 'Triage bot', agentId: agent.id.toUpperCase() })
      await assert.rejects(createApiKey(db, { workspaceId, name: 'Triage bot' }), /add --agent/)
      const again = await createApiKey(db, { workspaceId, name: 'Triage bot 2', handle: 'triage-bot', agentId: agent.id })
      assert.equal(again.principalId, created.principalId)
      const key = bearer(created.key)

      const me = (await send(app, 'GET', '/api/me', undefined, key)).json()
      assert.deepEqual(me, { principalId: created.principalId, handle: 'triage-bot', role: 'agent', workspaceId, agentId: agent.id })

      // Every route of the API but its own is a 403, before validation, whatever the body.
      const document = (await send(app, 'GET', '/openapi.json')).json() as { paths: Record<string, Record<string, unknown>> }
      let checked = 0
      for (const [path, methods] of Object.entries(document.paths)) {
        if (!path.startsWith('/api/') || path === '/api/me' || path.startsWith('/api/tasks/')) continue
        for (const method of Object.keys(methods)) {
          const url = path.replace(/\{[^}]+\}/g, agent.id)
          const res = await send(app, method.toUpperCase() as 'GET', url, method === 'get' || method === 'delete' ? undefined : { name: 'x' }, key)
          assert.equal(res.statusCode, 403, `${method} ${url}: ${res.body}`)
          assert.match(res.json().detail, /agent key may only/)
          checked += 1
        }
      }
      assert.ok(checked >= 10, `checked ${checked} routes`)
      assert.equal((await send(app, 'GET', `/api/agents/${agent.id}`, undefined, admin)).json().name, 'Triage bot', 'unchanged')

      assert.equal((await send(app, 'DELETE', `/api/agents/${agent.id}`, undefined, admin)).statusCode, 204)
      assert.equal((await send(app, 'GET', '/api/me', undefined, key)).statusCode, 401)
    })

    it('keys create (the CLI command) prints the handle and refuses mistakes with a usage error', async () => {
      const db = app.database.db
      const lines = await createKeyCommand(db, { name: 'Ops Team', role: 'admin', workspace: 'cli-ws' })
      assert.match(lines[0] as string, /@ops-team, role admin, workspace cli-ws$/)
      assert.match(lines[2] as string, /^tdm_/)
      const again = await createKeyCommand(db, { name: 'Ops laptop', handle: 'ops-team', role: 'admin', workspace: 'cli-ws' })
      assert.equal(again[0]?.split('principal ')[1]?.split(' ')[0], lines[0]?.split('principal ')[1]?.split(' ')[0])
      await assert.rejects(createKeyCommand(db, { workspace: 'cli-ws' }), UsageError)
      await assert.rejects(createKeyCommand(db, { name: 'n', role: 'owner', workspace: 'cli-ws' }), /--role must be admin or member/)
      await assert.rejects(createKeyCommand(db, { name: 'n', role: 'admin', agent: SOME_ID, workspace: 'cli-ws' }), /leave out --role/)
      await assert.rejects(createKeyCommand(db, { name: 'n', agent: SOME_ID, workspace: 'cli-ws' }), UsageError)
    })
  })

  describe(`migration 0010: existing keys get handles (${dialect})`, () => {
    it('one principal per key, handles from names, deduplicated in each workspace, local kept free', async () => {
      const fresh = await freshDatabase(dialect)
      const database = connect(fresh.url, { schema: fresh.schema, poolSize: 2 })
      try {
        await migrateTo(database, '0003_idempotency_keys')
        const db = database.db
        const w1 = await ensureWorkspace(db, 'default')
        const w2 = await ensureWorkspace(db, 'second')
        const keys = [
          ['k1', w1, 'Alice', 'p1', 'admin'],
          ['k2', w1, 'alice', 'p2', 'member'],
          ['k3', w1, 'ALICE!', 'p3', 'member'],
          ['k4', w1, 'Local', 'p4', 'member'],
          ['k5', w2, 'Alice', 'p5', 'member'],
        ] as const
        for (const [id, workspace, name, principal, role] of keys) {
          await (db as any).insertInto('api_keys').values({ id, workspace_id: workspace, name, principal_id: principal, role, key_hash: `hash-${id}`, created_at: `2026-01-01T00:00:0${id[1]}.000Z`, revoked_at: null }).execute()
        }
        await migrateToLatest(database)
        const rows = await db.selectFrom('principals').select(['id', 'workspace_id', 'handle', 'role', 'agent_id']).orderBy('id').execute()
        assert.deepEqual(rows, [
          { id: 'p1', workspace_id: w1, handle: 'alice', role: 'admin', agent_id: null },
          { id: 'p2', workspace_id: w1, handle: 'alice-2', role: 'member', agent_id: null },
          { id: 'p3', workspace_id: w1, handle: 'alice-', role: 'member', agent_id: null },
          { id: 'p4', workspace_id: w1, handle: 'local-2', role: 'member', agent_id: null },
          { id: 'p5', workspace_id: w2, handle: 'alice', role: 'member', agent_id: null },
        ])
      } finally {
        await database.close()
        await fresh.drop()
      }
    })
  })
}
