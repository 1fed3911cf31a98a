// If-Match must quote its ETags (RFC 9110): an unquoted `If-Match: 2` is a 400 that says so, not a 412.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, pointers, send } from '../helpers.js'

const content = (text: string) => ({ content: { blocks: [{ type: 'rich_text', elements: [{ type: 'paragraph', children: [{ type: 'text', text }] }] }] } })

for (const dialect of dialects()) {
  describe(`If-Match form (${dialect})`, () => {
    let app: FastifyInstance
    let url: string
    before(async () => {
      app = await build(dialect)
      const stream = (await send(app, 'POST', '/api/streams', { name: 'S' })).json().id
      url = `/api/chat/messages/${(await send(app, 'POST', `/api/chat/streams/${stream}/messages`, content('one'))).json().id}`
    })
    after(() => app.close())

    it('an unquoted or otherwise malformed If-Match is a 400 naming the header, and changes nothing', async () => {
      for (const bad of ['1', '2', 'W/1', '"1', '"1" "2"', '"1",,']) {
        const res = await send(app, 'PATCH', url, content('two'), { 'if-match': bad })
        assert.equal(res.statusCode, 400, bad)
        assert.deepEqual(pointers(res), ['/headers/if-match'])
        assert.match(res.json().errors[0].detail, /must be quoted/)
      }
      assert.equal((await send(app, 'GET', url)).json().revision, 1)
    })

    it('well-formed lists, weak tags and * keep their meaning', async () => {
      assert.equal((await send(app, 'PATCH', url, content('w'), { 'if-match': 'W/"1"' })).statusCode, 412)
      assert.equal((await send(app, 'PATCH', url, content('two'), { 'if-match': '"7", "1"' })).statusCode, 200)
      assert.equal((await send(app, 'PATCH', url, content('three'), { 'if-match': '*' })).statusCode, 200)
      const stale = await send(app, 'PATCH', url, content('four'), { 'if-match': '"2"' })
      assert.equal(stale.statusCode, 412)
      assert.match(stale.json().detail, /ETag "3"/)
    })
  })
}
