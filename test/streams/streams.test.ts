// /api/streams: create, list and read.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, pointers, send } from '../helpers.js'

for (const dialect of dialects()) {
  describe(`streams (${dialect})`, () => {
    let app: FastifyInstance
    before(async () => {
      app = await build(dialect)
    })
    after(() => app.close())

    it('creates a stream (201 + Location) and reads it back', async () => {
      const res = await send(app, 'POST', '/api/streams', { name: 'Support', description: 'Inbound tickets' })
      assert.equal(res.statusCode, 201)
      const stream = res.json()
      assert.equal(res.headers.location, `/api/streams/${stream.id}`)
      assert.deepEqual(Object.keys(stream).sort(), ['createdAt', 'description', 'id', 'name'])
      assert.deepEqual((await send(app, 'GET', `/api/streams/${stream.id.toUpperCase()}`)).json(), stream)
      assert.equal((await send(app, 'POST', '/api/streams', { name: 'No description' })).json().description, null)
    })

    it('name is 1 to 120 characters; description at most 2000; nothing else', async () => {
      assert.equal((await send(app, 'POST', '/api/streams', { name: 's'.repeat(120), description: 'd'.repeat(2000) })).statusCode, 201)
      const res = await send(app, 'POST', '/api/streams', { name: 's'.repeat(121), description: 'd'.repeat(2001), color: 'red' })
      assert.equal(res.statusCode, 400)
      assert.deepEqual(pointers(res), ['/color', '/description', '/name'])
      assert.deepEqual(pointers(await send(app, 'POST', '/api/streams', { name: '' })), ['/name'])
      assert.deepEqual(pointers(await send(app, 'POST', '/api/streams', {})), ['/name'])
    })

    it('lists streams with cursor pagination', async () => {
      for (let i = 0; i < 3; i++) await send(app, 'POST', '/api/streams', { name: `page-${i}` })
      const first = (await send(app, 'GET', '/api/streams?limit=2')).json()
      assert.equal(first.data.length, 2)
      assert.ok(first.nextCursor)
      const rest = (await send(app, 'GET', `/api/streams?limit=100&cursor=${first.nextCursor}`)).json()
      assert.equal(rest.nextCursor, null)
      const all = [...first.data, ...rest.data].map((s: { id: string }) => s.id)
      assert.equal(new Set(all).size, all.length)
      assert.equal((await send(app, 'GET', '/api/streams/01890a5d-ac96-774b-bcce-b302099a8057')).statusCode, 404)
    })
  })
}
