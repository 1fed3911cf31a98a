// A stream's first reader on an instance starts its feed, which reads the stream's head after the reader has
// subscribed — and possibly after the reader's own first read. Events that commit in between must still reach
// the reader. Here the feed's read of the head is held until events have committed after the reader's replay,
// so the race a busy server runs into now and then happens every time.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import { build, dialects, send } from '../helpers.js'
import type { Database } from '../../src/db/database.js'
import { appendEvent } from '../../src/events/store.js'
import { EventHub, type FeedReader } from '../../src/events/hub.js'
import { SseConnection } from '../../src/events/sse.js'
import type { StreamEvent } from '../../src/events/schemas.js'
import { ensureWorkspace } from '../../src/workspaces/store.js'
import { TaskFollower } from '../../src/a2a/follow.js'
import { openEventStream } from './sse-client.js'
import { waitFor } from '../wait.js'
import { failingEventReads, holdingHeadReads } from './feed-db.js'

for (const dialect of dialects()) {
  describe(`a stream's new feed (${dialect})`, () => {
    let app: FastifyInstance
    let workspaceId: string
    before(async () => {
      app = await build(dialect, { TANDEM_AUTH: 'local' })
      workspaceId = await ensureWorkspace(app.database.db, 'default')
    })
    after(() => app.close())

    const newStream = async () => (await send(app, 'POST', '/api/streams', { name: 'feed' })).json().id as string
    const append = (streamId: string, i: number) =>
      app.database.db.transaction().execute((trx) => appendEvent(trx, { workspaceId, streamId, type: 'run.updated', data: { i } }))
    const startHub = async (db: Kysely<Database>) => {
      const hub = new EventHub(db, app.log)
      await hub.start(dialect === 'postgres' ? app.config.databaseUrl : undefined)
      return hub
    }

    it('tells the readers that subscribed before it read the head where it starts', async () => {
      const streamId = await newStream()
      await append(streamId, 1)
      const held = holdingHeadReads(app.database.db)
      const hub = await startHub(held.db)
      try {
        const received: number[] = []
        const started: number[] = []
        const reader: FeedReader = {
          receive: (events: StreamEvent[]) => received.push(...events.map((e) => Number(e.id))),
          started: (lastId) => started.push(lastId),
          close: () => undefined,
        }
        const unsubscribe = hub.subscribe(streamId, reader)
        await waitFor(() => held.held() === 1, { timeoutMs: 5000, what: 'the feed to read the head' })
        // Committed after the reader subscribed, before the feed knows where it starts.
        for (let i = 2; i <= 4; i++) await append(streamId, i)
        held.release()
        await waitFor(() => started.length === 1, { timeoutMs: 5000, what: 'the reader to be told where the feed starts' })
        assert.deepEqual(started, [4])
        await append(streamId, 5)
        await waitFor(() => received.includes(5), { timeoutMs: 5000, what: 'event 5' })
        assert.deepEqual(received, [5])
        // A reader that joins the started feed is not told again: it misses nothing.
        const later: number[] = []
        const unsubscribeLater = hub.subscribe(streamId, { receive: () => undefined, started: (lastId) => later.push(lastId), close: () => undefined })
        await append(streamId, 6)
        await waitFor(() => received.includes(6), { timeoutMs: 5000, what: 'event 6' })
        assert.deepEqual(started, [4])
        assert.deepEqual(later, [])
        unsubscribe()
        unsubscribeLater()
      } finally {
        await hub.close()
      }
    })

    it('SSE: events that commit after the replay and before the feed reads the head are sent, once and in order', async () => {
      const streamId = await newStream()
      for (let i = 1; i <= 2; i++) await append(streamId, i)
      const held = holdingHeadReads(app.database.db)
      const hub = await startHub(held.db)
      const server = http.createServer((_request, response) => {
        response.writeHead(200, { 'content-type': 'text/event-stream' })
        new SseConnection(response, app.database.db, streamId, 0, hub, { keepAliveMs: 60_000, maxBufferBytes: 1 << 20, maxLifetimeMs: 60_000 }, app.log)
      })
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      const sse = await openEventStream(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`)
      try {
        // The replay has sent what was there; the feed is still waiting for the head.
        assert.deepEqual((await sse.events(2)).map((m) => Number(m.id)), [1, 2])
        assert.equal(held.held(), 1)
        for (let i = 3; i <= 5; i++) await append(streamId, i)
        held.release()
        // Without being told where the feed starts, the connection would wait for event 6 to see the hole.
        assert.deepEqual((await sse.events(5)).map((m) => Number(m.id)), [1, 2, 3, 4, 5])
        await append(streamId, 6)
        await sse.events(6)
        assert.deepEqual(sse.messages.filter((m) => m.comment === undefined).map((m) => Number(m.id)), [1, 2, 3, 4, 5, 6])
      } finally {
        sse.close()
        await hub.close()
        await new Promise((resolve) => server.close(resolve))
      }
    })

    it('a failed read of new events is tried again: they reach the reader with no later wake-up', async () => {
      const streamId = await newStream()
      const failing = failingEventReads(app.database.db)
      const hub = await startHub(failing.db)
      try {
        const received: number[] = []
        let started = -1
        const unsubscribe = hub.subscribe(streamId, { receive: (events) => received.push(...events.map((e) => Number(e.id))), started: (lastId) => (started = lastId), close: () => undefined })
        await waitFor(() => started === 0, { timeoutMs: 5000, what: 'the feed to start' })
        failing.fail = 2
        await append(streamId, 1)
        await waitFor(() => received.length > 0, { timeoutMs: 5000, what: 'event 1, after two failed reads' })
        assert.equal(failing.fail, 0)
        assert.deepEqual(received, [1])
        unsubscribe()
      } finally {
        await hub.close()
      }
    })

    it('an A2A task follower reads the run again when the feed starts after a change it did not see', async () => {
      const streamId = await newStream()
      const runId = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b'
      const held = holdingHeadReads(app.database.db)
      const hub = await startHub(held.db)
      const follower = new TaskFollower({ events: hub } as unknown as FastifyInstance, streamId, runId)
      try {
        // The consumer's first read of the run.
        assert.deepEqual(await follower.next(0), { kind: 'changed' })
        await waitFor(() => held.held() === 1, { timeoutMs: 5000, what: 'the feed to read the head' })
        // The run changes after that read, before the feed knows where it starts.
        await app.database.db.transaction().execute((trx) => appendEvent(trx, { workspaceId, streamId, type: 'run.updated', data: { id: runId } }))
        assert.equal(await follower.next(0), null)
        held.release()
        assert.deepEqual(await follower.next(5000), { kind: 'changed' })
      } finally {
        follower.close()
        await hub.close()
      }
    })
  })
}
