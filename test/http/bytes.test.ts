// Bytes in, bytes out: a body that is not UTF-8 is refused (never stored as U+FFFD), a bodiless method may
// carry an empty JSON body, and path ids of any case reach every route lower-cased (one plugin does it).
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'

for (const dialect of dialects()) {
  describe(`bytes and path ids (${dialect})`, () => {
    let app: FastifyInstance
    before(async () => {
      app = await build(dialect)
    })
    after(() => app.close())

    it('a body that is not valid UTF-8 is a 400 malformed-json and stores nothing', async () => {
      const before = (await send(app, 'GET', '/api/agents?limit=100')).json().data.length
      const bodies = [
        Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}')]),
        Buffer.concat([Buffer.from('{"name":"a'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]), // an encoded surrogate
        Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')]), // an overlong form
      ]
      for (const payload of bodies) {
        const res = await app.inject({ method: 'POST', url: '/api/agents', payload, headers: { 'content-type': 'application/json' } })
        assert.equal(res.statusCode, 400)
        assert.equal(res.json().type, 'urn:tandem:problem:malformed-json')
        assert.equal(res.json().detail, 'The body is not valid UTF-8.')
      }
      assert.equal((await send(app, 'GET', '/api/agents?limit=100')).json().data.length, before)
      const astral = await app.inject({ method: 'POST', url: '/api/agents', payload: Buffer.from('{"name":"ok 😀 é"}'), headers: { 'content-type': 'application/json' } })
      assert.equal(astral.statusCode, 201)
      assert.equal(astral.json().name, 'ok 😀 é')
    })

    it('a DELETE with content-type application/json and no body is accepted; a POST without one is not', async () => {
      const id = (await send(app, 'POST', '/api/agents', { name: 'Doomed' })).json().id
      const res = await app.inject({ method: 'DELETE', url: `/api/agents/${id}`, headers: { 'content-type': 'application/json' } })
      assert.equal(res.statusCode, 204)
      const post = await app.inject({ method: 'POST', url: '/api/agents', headers: { 'content-type': 'application/json' } })
      assert.equal(post.statusCode, 400)
      assert.equal(post.json().type, 'urn:tandem:problem:malformed-json')
    })

    it('upper-case path ids reach every route as the stored lower-case id', async () => {
      const agent = (await send(app, 'POST', '/api/agents', { name: 'Case' })).json().id as string
      const stream = (await send(app, 'POST', '/api/streams', { name: 'Case' })).json().id as string
      const message = (await send(app, 'POST', `/api/chat/streams/${stream.toUpperCase()}/messages`, { content: { blocks: [] } }))
      assert.equal(message.statusCode, 400) // at least one block
      const posted = await send(app, 'POST', `/api/chat/streams/${stream.toUpperCase()}/messages`, { content: { blocks: [{ type: 'rich_text', elements: [] }] } })
      assert.equal(posted.statusCode, 201)
      assert.equal(posted.json().streamId, stream)
      const upper = (id: string) => id.toUpperCase()
      assert.equal((await send(app, 'GET', `/api/agents/${upper(agent)}`)).json().id, agent)
      assert.equal((await send(app, 'PATCH', `/api/agents/${upper(agent)}`, { name: 'CASE' })).json().name, 'CASE')
      assert.equal((await send(app, 'GET', `/api/streams/${upper(stream)}`)).json().id, stream)
      assert.equal((await send(app, 'GET', `/api/chat/messages/${upper(posted.json().id)}`)).json().id, posted.json().id)
      assert.equal((await send(app, 'GET', `/api/chat/streams/${upper(stream)}/messages`)).json().data.length, 1)
      assert.equal((await send(app, 'DELETE', `/api/agents/${upper(agent)}`)).statusCode, 204)
    })
  })
}
