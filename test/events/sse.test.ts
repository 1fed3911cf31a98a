// GET /api/streams/{id}/events: pages of JSON and Server-Sent Events over real sockets — replay, resume,
// the seam between replay and live, keep-alives, bad positions, expiry, slow clients and shutdown.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { build, dialects, pointers, send } from '../helpers.js'
import { appendEvent, purgeEvents } from '../../src/events/store.js'
import { ensureWorkspace } from '../../src/workspaces/store.js'
import { openEventStream } from './sse-client.js'
import { waitFor } from '../wait.js'
import { createKey } from '../auth.js'

const contentOf = (text: string) => ({ blocks: [{ type: 'rich_text', elements: [{ type: 'paragraph', children: [{ type: 'text', text }] }] }] })

for (const dialect of dialects()) {
  describe(`stream events (${dialect})`, () => {
    let app: FastifyInstance
    let base: string
    const newStream = async () => (await send(app, 'POST', '/api/streams', { name: 'events' })).json().id as string
    const post = (streamId: string, text: string) => send(app, 'POST', `/api/chat/streams/${streamId}/messages`, { content: contentOf(text) })
    const postMany = async (streamId: string, n: number, prefix = 'm') => {
      for (let i = 0; i < n; i++) assert.equal((await post(streamId, `${prefix}${i}`)).statusCode, 201)
    }
    const ids = (messages: Array<{ id?: string }>) => messages.map((m) => Number(m.id))
    const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i)

    before(async () => {
      app = await build(dialect, { TANDEM_AUTH: 'local', TANDEM_SSE_KEEPALIVE_MS: '200' })
      await app.listen({ port: 0, host: '127.0.0.1' })
      base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
    })
    after(() => app.close())

    it('JSON: pages after ?after= and ?cursor=, oldest first, each event in the documented shape', async () => {
      const streamId = await newStream()
      await postMany(streamId, 5)
      const all = await send(app, 'GET', `/api/streams/${streamId}/events`, undefined, { accept: 'application/json' })
      assert.equal(all.statusCode, 200)
      assert.match(all.headers['content-type'] as string, /^application\/json/)
      const events = all.json().data
      assert.deepEqual(ids(events), range(1, 5))
      assert.deepEqual(Object.keys(events[0]).sort(), ['createdAt', 'data', 'id', 'streamId', 'type'])
      assert.equal(events[0].type, 'message.created')
      assert.equal(events[0].data.text, 'm0')
      assert.equal(all.json().nextCursor, null)
      const first = (await send(app, 'GET', `/api/streams/${streamId}/events?after=1&limit=2`)).json()
      assert.deepEqual(ids(first.data), [2, 3])
      const second = (await send(app, 'GET', `/api/streams/${streamId}/events?cursor=${first.nextCursor}&limit=2`)).json()
      assert.deepEqual(ids(second.data), [4, 5])
      assert.deepEqual((await send(app, 'GET', `/api/streams/${streamId}/events?after=5`)).json(), { data: [], nextCursor: null })
    })

    it('bad positions are 400s naming the field; unknown and foreign streams are 404', async () => {
      const streamId = await newStream()
      await postMany(streamId, 2)
      const url = `/api/streams/${streamId}/events`
      for (const bad of ['-1', 'abc', '01', '1.5', '']) {
        const res = await send(app, 'GET', `${url}?after=${bad}`)
        assert.equal(res.statusCode, 400, bad)
        assert.deepEqual(pointers(res), ['/query/after'])
      }
      const beyond = await send(app, 'GET', `${url}?after=3`)
      assert.equal(beyond.statusCode, 400)
      assert.deepEqual(pointers(beyond), ['/query/after'])
      assert.equal((await send(app, 'GET', `${url}?after=2`)).statusCode, 200)
      assert.deepEqual(pointers(await send(app, 'GET', `${url}?cursor=nope`)), ['/query/cursor'])
      assert.deepEqual(pointers(await send(app, 'GET', `${url}?after=1&cursor=${Buffer.from('1').toString('base64url')}`)), ['/query/cursor'])
      assert.deepEqual(pointers(await send(app, 'GET', `${url}?limit=101`)), ['/query/limit'])
      for (const header of ['x', '-3', '1e3', '9']) {
        const res = await send(app, 'GET', url, undefined, { accept: 'text/event-stream', 'last-event-id': header })
        assert.equal(res.statusCode, 400, header)
        assert.deepEqual(pointers(res), ['/headers/last-event-id'])
      }
      assert.equal((await send(app, 'GET', '/api/streams/0190d5a8-0000-7000-8000-000000000009/events')).statusCode, 404)
      const foreign = (await createKey(app, { workspace: 'elsewhere', name: 'x', role: 'admin' })).headers
      assert.equal((await send(app, 'GET', url, undefined, foreign)).statusCode, 404)
      const sse = await openEventStream(`${base}${url}`, foreign)
      assert.equal(sse.status, 404)
      sse.close()
    })

    it('SSE: without a position, only new events; frames carry id, event and the event JSON', async () => {
      const streamId = await newStream()
      await postMany(streamId, 3, 'old')
      const sse = await openEventStream(`${base}/api/streams/${streamId}/events`)
      try {
        assert.equal(sse.status, 200)
        assert.match(sse.headers['content-type'] as string, /^text\/event-stream/)
        assert.equal(sse.headers['x-content-type-options'], 'nosniff')
        const posted = (await post(streamId, 'new')).json()
        const [message] = await sse.events(1)
        assert.equal(message?.id, '4')
        assert.equal(message?.event, 'message.created')
        const event = JSON.parse(message?.data as string)
        assert.deepEqual(event.data, posted)
        assert.equal(event.id, '4')
        assert.equal(event.streamId, streamId)
      } finally {
        sse.close()
      }
    })

    it('SSE: disconnect mid-stream, write, reconnect with Last-Event-ID: exactly the missed events, then live', async () => {
      const streamId = await newStream()
      const url = `${base}/api/streams/${streamId}/events?after=0`
      const first = await openEventStream(url)
      await postMany(streamId, 4)
      assert.deepEqual(ids(await first.events(4)), range(1, 4))
      first.close()
      await postMany(streamId, 5, 'missed')
      // An EventSource reconnects with its URL unchanged (?after=0) and Last-Event-ID: the header wins.
      const second = await openEventStream(url, { 'last-event-id': '4' })
      try {
        const missed = await second.events(5)
        assert.deepEqual(ids(missed), range(5, 9))
        assert.deepEqual(missed.map((m) => JSON.parse(m.data as string).data.text), ['missed0', 'missed1', 'missed2', 'missed3', 'missed4'])
        await post(streamId, 'live')
        assert.deepEqual(ids(await second.events(6)), range(5, 10))
        // A stream's events arrive in order: a duplicate would come before the next one, so wait for that.
        await post(streamId, 'marker')
        await second.events(7)
        assert.deepEqual(ids(second.messages.filter((m) => m.comment === undefined)), range(5, 11))
      } finally {
        second.close()
      }
    })

    it('SSE: replay then live with writes racing the connection: every event once, in order', async () => {
      const streamId = await newStream()
      const workspaceId = await ensureWorkspace(app.database.db, 'default')
      const append = (i: number) => app.database.db.transaction().execute((trx) => appendEvent(trx, { workspaceId, streamId, type: 'run.updated', data: { i } }))
      for (let i = 1; i <= 40; i++) await append(i)
      const writers = Promise.all(range(41, 160).map(append))
      const sse = await openEventStream(`${base}/api/streams/${streamId}/events?after=10`)
      try {
        await writers
        const events = await sse.events(150)
        assert.deepEqual(ids(events), range(11, 160))
        // A stream's events arrive in order: a duplicate would come before the next one, so wait for that.
        await append(161)
        await sse.events(151)
        assert.deepEqual(ids(sse.messages.filter((m) => m.comment === undefined)), range(11, 161))
      } finally {
        sse.close()
      }
    })

    it('SSE: a keep-alive comment while nothing happens (TANDEM_SSE_KEEPALIVE_MS)', async () => {
      const streamId = await newStream()
      const sse = await openEventStream(`${base}/api/streams/${streamId}/events`)
      const opened = Date.now()
      try {
        const keepAlives = () => sse.messages.filter((m) => m.comment === 'keep-alive').length
        await waitFor(() => keepAlives() >= 2, { timeoutMs: 5000, what: 'two keep-alive comments', everyMs: 5 })
        // Every 200 ms: two of them well within 700 ms of the connection.
        assert.ok(Date.now() - opened <= 700, `two keep-alives took ${Date.now() - opened} ms`)
      } finally {
        sse.close()
      }
    })

    it('a client that disconnects is forgotten by the instance', async () => {
      const streamId = await newStream()
      const settle = (count: number) => waitFor(() => app.events.readerCount === count, { timeoutMs: 2000, what: `${count} readers` })
      await settle(0)
      const sse = await openEventStream(`${base}/api/streams/${streamId}/events`)
      assert.equal(app.events.readerCount, 1)
      sse.close()
      await settle(0)
    })

    it('retention: an after older than the events kept is a 410 events-expired; later positions still work', async () => {
      const streamId = await newStream()
      await postMany(streamId, 6)
      const db = app.database.db
      await db.updateTable('stream_events').set({ created_at: '2000-01-01T00:00:00.000Z' }).where('stream_id', '=', streamId).where('id', '<=', 4).execute()
      assert.equal(await purgeEvents(db, '2001-01-01T00:00:00.000Z', 1000), 4)
      for (const position of ['0', '3']) {
        const res = await send(app, 'GET', `/api/streams/${streamId}/events?after=${position}`)
        assert.equal(res.statusCode, 410, position)
        assert.equal(res.json().type, 'urn:tandem:problem:events-expired')
        const sse = await openEventStream(`${base}/api/streams/${streamId}/events`, { 'last-event-id': position })
        assert.equal(sse.status, 410)
        sse.close()
      }
      assert.deepEqual(ids((await send(app, 'GET', `/api/streams/${streamId}/events?after=4`)).json().data), [5, 6])
      assert.deepEqual(ids((await send(app, 'GET', `/api/streams/${streamId}/events`)).json().data), [5, 6])
      await post(streamId, 'after purge')
      assert.deepEqual(ids((await send(app, 'GET', `/api/streams/${streamId}/events?after=4`)).json().data), [5, 6, 7])
    })
  })
}
