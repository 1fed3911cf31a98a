// Agents kept as JSON per row and version (src/agents/json-cache.ts): a read always checks the row's version,
// so a change made through another instance is seen at once; only committed rows are kept; the cache is bounded.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { RowJsonCache, agentJsonCache } from '../../src/agents/json-cache.js'
import { findAgentJson, updateAgent } from '../../src/agents/store.js'
import { TEST_SECRET_KEY, dialects, freshDatabase, send, type TestDatabase } from '../helpers.js'

describe('RowJsonCache', () => {
  it('answers a row only at the version it was kept at, and keeps one version per row', () => {
    const cache = new RowJsonCache(100)
    cache.set('a', 1, '{"v":1}')
    assert.equal(cache.get('a', 1), '{"v":1}')
    assert.equal(cache.get('a', 2), undefined)
    cache.set('a', 2, '{"v":2}')
    assert.equal(cache.get('a', 1), undefined)
    assert.deepEqual(cache.size, { entries: 1, chars: 7 })
  })

  it('stays within its bound, dropping the oldest rows first, and never keeps a text larger than it', () => {
    const cache = new RowJsonCache(30)
    for (const id of ['a', 'b', 'c', 'd']) cache.set(id, 1, id.repeat(10))
    assert.deepEqual(cache.size, { entries: 3, chars: 30 })
    assert.equal(cache.get('a', 1), undefined)
    assert.equal(cache.get('d', 1), 'dddddddddd')
    cache.set('e', 1, 'e'.repeat(31))
    assert.equal(cache.get('e', 1), undefined)
    assert.ok(cache.size.chars <= 30)
  })
})

for (const dialect of dialects()) {
  describe(`agents read through the JSON cache (${dialect})`, () => {
    let database: TestDatabase
    let one: FastifyInstance
    let two: FastifyInstance
    before(async () => {
      database = await freshDatabase(dialect)
      const config = loadConfig({ LOG_LEVEL: 'silent', TANDEM_SECRET_KEY: TEST_SECRET_KEY, TANDEM_WORKERS: '0', DATABASE_URL: database.url })
      one = await buildApp(config, { connect: { schema: database.schema } })
      two = await buildApp(config, { connect: { schema: database.schema } })
    })
    after(async () => {
      await one.close()
      await two.close()
      await database.drop()
    })

    it('a change made through another instance is read at once, by get and by list', async () => {
      const id = (await send(one, 'POST', '/api/agents', { name: 'Before', instructions: 'old' })).json().id
      for (let i = 0; i < 2; i++) assert.equal((await send(one, 'GET', `/api/agents/${id}`)).json().name, 'Before')
      assert.ok(agentJsonCache(one.database.db).has(id), 'instance one keeps it')
      // Two changes at once through instance two: versions, not timestamps, tell them apart.
      await send(two, 'PATCH', `/api/agents/${id}`, { name: 'After' })
      await send(two, 'PATCH', `/api/agents/${id}`, { instructions: 'new' })
      const got = (await send(one, 'GET', `/api/agents/${id}`)).json()
      assert.deepEqual([got.name, got.instructions], ['After', 'new'])
      const listed = (await send(one, 'GET', '/api/agents?limit=100')).json().data.find((a: { id: string }) => a.id === id)
      assert.deepEqual([listed.name, listed.instructions], ['After', 'new'])
      await send(two, 'DELETE', `/api/agents/${id}`)
      assert.equal((await send(one, 'GET', `/api/agents/${id}`)).statusCode, 404)
      assert.ok(!(await send(one, 'GET', '/api/agents?limit=100')).json().data.some((a: { id: string }) => a.id === id))
    })

    it('another workspace\'s agent stays invisible, cached or not', async () => {
      const id = (await send(one, 'POST', '/api/agents', { name: 'Mine' })).json().id
      await send(one, 'GET', `/api/agents/${id}`)
      assert.equal(await findAgentJson(one.database.db, '01890a5d-ac96-774b-bcce-b302099a8057', id), undefined)
    })

    it('a read inside a transaction that rolls back keeps nothing: a later change to the same version is read right', async () => {
      const id = (await send(one, 'POST', '/api/agents', { name: 'Steady' })).json().id
      const workspaceId = (await send(one, 'GET', '/api/me')).json().workspaceId as string
      await one.database.db
        .transaction()
        .execute(async (trx) => {
          await updateAgent(trx, workspaceId, id, { name: 'Never committed' })
          assert.match((await findAgentJson(trx, workspaceId, id)) as string, /Never committed/)
          throw new Error('roll back')
        })
        .catch(() => {})
      await send(one, 'PATCH', `/api/agents/${id}`, { name: 'Committed' })
      assert.equal((await send(one, 'GET', `/api/agents/${id}`)).json().name, 'Committed')
    })
  })
}
