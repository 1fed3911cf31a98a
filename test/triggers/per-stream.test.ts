// The per-stream bound of schedules, message triggers and inbound hooks: the 100th is taken, the 101st is a
// 422 that changes nothing, and deleting one makes room again.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { MAX_PER_STREAM } from '../../src/triggers/schemas.js'
import { createStream } from '../runs/setup.js'

const KINDS = [
  { path: 'schedules', body: { triggerName: 'tick', cron: '0 9 * * 1' }, remove: (id: string) => `/api/schedules/${id}`, list: (page: any) => page.data.length },
  { path: 'message-triggers', body: { triggerName: 'tick', match: { prefix: '/tick' } }, remove: (id: string) => `/api/message-triggers/${id}`, list: (page: any) => page.data.length },
  { path: 'hooks', body: { triggerName: 'tick' }, remove: (id: string) => `/api/hooks/${id}`, list: (page: any) => page.data.length },
]

for (const dialect of dialects()) {
  describe(`operators' resources per stream (${dialect})`, () => {
    let app: FastifyInstance
    before(async () => {
      app = await build(dialect)
    })
    after(() => app.close())

    for (const kind of KINDS) {
      it(`a stream takes ${MAX_PER_STREAM} ${kind.path} and refuses one more (422), until one is deleted`, async () => {
        const streamId = await createStream(app, `bound-${kind.path}`)
        const url = `/api/streams/${streamId}/${kind.path}`
        let last = ''
        for (let n = 0; n < MAX_PER_STREAM; n++) {
          const res = await send(app, 'POST', url, kind.body)
          assert.equal(res.statusCode, 201, res.body)
          last = res.json().id
        }
        const refused = await send(app, 'POST', url, kind.body)
        assert.equal(refused.statusCode, 422)
        assert.match(refused.json().detail, new RegExp(`at most ${MAX_PER_STREAM}`))
        assert.equal(kind.list((await send(app, 'GET', `${url}${kind.path === 'schedules' ? '?limit=100' : ''}`)).json()), MAX_PER_STREAM, 'nothing stored')
        assert.equal((await send(app, 'DELETE', kind.remove(last))).statusCode, 204)
        assert.equal((await send(app, 'POST', url, kind.body)).statusCode, 201)
        // Another stream has its own room.
        assert.equal((await send(app, 'POST', `/api/streams/${await createStream(app, `other-${kind.path}`)}/${kind.path}`, kind.body)).statusCode, 201)
      })
    }
  })
}
