// Concurrency across two service instances on one database (one PostgreSQL schema, or one SQLite file):
// many creates and edits at once give no 5xx, no duplicate ids and no lost update or revision.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { TEST_SECRET_KEY, dialects, freshDatabase, type TestDatabase } from './helpers.js'

const contentOf = (text: string) => ({ blocks: [{ type: 'rich_text', elements: [{ type: 'paragraph', children: [{ type: 'text', text }] }] }] })

for (const dialect of dialects()) {
  describe(`two instances, one database (${dialect})`, () => {
    let database: TestDatabase
    let instances: FastifyInstance[]
    let urls: string[]
    before(async () => {
      database = await freshDatabase(dialect)
      const config = loadConfig({ LOG_LEVEL: 'silent', TANDEM_SECRET_KEY: TEST_SECRET_KEY, DATABASE_URL: database.url })
      instances = [await buildApp(config, { connect: { schema: database.schema } }), await buildApp(config, { connect: { schema: database.schema } })]
      urls = await Promise.all(instances.map((app) => app.listen({ port: 0, host: '127.0.0.1' })))
    })
    after(async () => {
      for (const app of instances) await app.close()
      await database.drop()
    })

    const call = async (i: number, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
      const res = await fetch(urls[i % 2] + path, { method, headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...headers }, body: body ? JSON.stringify(body) : undefined })
      return { status: res.status, json: (await res.json()) as any }
    }

    it('creates and edits at once through both instances without a 5xx, a duplicate or a lost update', async () => {
      const stream = (await call(0, 'POST', '/api/streams', { name: 'busy' })).json
      const messages: string[] = []
      for (let i = 0; i < 4; i++) messages.push((await call(i, 'POST', `/api/chat/streams/${stream.id}/messages`, { content: contentOf(`start ${i}`) })).json.id)

      const creates = Array.from({ length: 200 }, (_, i) => call(i, 'POST', '/api/agents', { name: `concurrent ${i}` }))
      const edits = Array.from({ length: 120 }, (_, i) => call(i, 'PATCH', `/api/chat/messages/${messages[i % 4]}`, { content: contentOf(`edit ${i}`) }))
      const results = await Promise.all([...creates, ...edits])
      assert.deepEqual(results.filter((r) => r.status >= 500), [], 'no 5xx')

      const created = results.slice(0, 200)
      assert.ok(created.every((r) => r.status === 201))
      const ids = created.map((r) => r.json.id)
      assert.equal(new Set(ids).size, 200, 'no duplicate ids')
      let listed: string[] = []
      let cursor: string | null = null
      do {
        const page: any = (await call(0, 'GET', `/api/agents?limit=100${cursor ? `&cursor=${cursor}` : ''}`)).json
        listed = [...listed, ...page.data.map((a: any) => a.id)]
        cursor = page.nextCursor
      } while (cursor)
      assert.deepEqual(listed.sort(), [...ids].sort(), 'every created agent is stored, once')

      const edited = results.slice(200)
      assert.ok(edited.every((r) => r.status === 200))
      for (const [m, id] of messages.entries()) {
        const mine = edited.filter((_, i) => i % 4 === m).map((r) => r.json)
        const current = (await call(1, 'GET', `/api/chat/messages/${id}`)).json
        assert.equal(current.revision, 1 + mine.length, 'no lost update')
        assert.deepEqual(mine.map((r) => r.revision).sort((a, b) => a - b), Array.from({ length: mine.length }, (_, i) => i + 2), 'each edit got its own revision')
        const history = (await call(0, 'GET', `/api/chat/messages/${id}/revisions?limit=100`)).json.data
        assert.deepEqual(history.map((r: any) => r.revision), Array.from({ length: mine.length }, (_, i) => i + 1))
        const texts = new Map([...history.map((r: any) => [r.revision, r.text]), [current.revision, current.text]])
        for (const r of mine) assert.equal(texts.get(r.revision), r.text, 'every acknowledged revision holds its content')
      }
    })

    it('of edits racing with one ETag through both instances, exactly one wins', async () => {
      const stream = (await call(0, 'POST', '/api/streams', { name: 'race' })).json
      const message = (await call(0, 'POST', `/api/chat/streams/${stream.id}/messages`, { content: contentOf('v1') })).json
      for (let round = 1; round <= 5; round++) {
        const statuses = await Promise.all(Array.from({ length: 6 }, (_, i) => call(i, 'PATCH', `/api/chat/messages/${message.id}`, { content: contentOf(`r${round} w${i}`) }, { 'if-match': `"${round}"` }).then((r) => r.status)))
        assert.deepEqual(statuses.sort(), [200, 412, 412, 412, 412, 412], `round ${round}`)
      }
    })
  })
}
