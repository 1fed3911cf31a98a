// The event log: every visible change appends its event in the same transaction; per-stream ids grow by
// one in commit order with no gaps, also under concurrent writers and rollbacks.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { appendEvent, listEvents, streamHead } from '../../src/events/store.js'
import { ensureWorkspace } from '../../src/workspaces/store.js'

const contentOf = (text: string) => ({ blocks: [{ type: 'rich_text', elements: [{ type: 'paragraph', children: [{ type: 'text', text }] }] }] })
const phase = { id: '0190d5a8-0000-7000-8000-000000000001', phaseName: 'Triage', goal: 'Triaged', instructions: 'Triage it', agentId: '00000000-0000-0000-0000-000000000000', autoAdvance: true, operatorPool: [] }

for (const dialect of dialects()) {
  describe(`event log (${dialect})`, () => {
    let app: FastifyInstance
    let workspaceId: string
    const newStream = async () => (await send(app, 'POST', '/api/streams', { name: 'events' })).json().id as string
    before(async () => {
      app = await build(dialect, { TANDEM_AUTH: 'local' })
      workspaceId = await ensureWorkspace(app.database.db, 'default')
    })
    after(() => app.close())

    it('posting, editing a message and saving a cycle append message.created, message.edited, cycle.saved with the resource as GET returns it', async () => {
      const streamId = await newStream()
      const posted = (await send(app, 'POST', `/api/chat/streams/${streamId}/messages`, { content: contentOf('hello') })).json()
      const edited = (await send(app, 'PATCH', `/api/chat/messages/${posted.id}`, { content: contentOf('hello again') })).json()
      const cycle = (await send(app, 'POST', `/api/cycles/streams/${streamId}/cycles`, { triggerName: 'manual', description: 'd', phasesTemplate: [phase] })).json()
      const events = await listEvents(app.database.db, streamId, 0, 10)
      assert.deepEqual(events.map((e) => [e.id, e.type, e.streamId]), [
        ['1', 'message.created', streamId],
        ['2', 'message.edited', streamId],
        ['3', 'cycle.saved', streamId],
      ])
      assert.deepEqual(events[0]?.data, posted)
      assert.deepEqual(events[1]?.data, edited)
      assert.deepEqual(events[1]?.data, (await send(app, 'GET', `/api/chat/messages/${posted.id}`)).json())
      assert.deepEqual(events[2]?.data, cycle)
      for (const event of events) assert.match(event.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      assert.deepEqual(await streamHead(app.database.db, streamId), { lastId: 3, purgedThrough: 0 })
    })

    it('a refused change appends nothing; ids are per stream', async () => {
      const one = await newStream()
      const two = await newStream()
      const posted = (await send(app, 'POST', `/api/chat/streams/${one}/messages`, { content: contentOf('a') })).json()
      assert.equal((await send(app, 'PATCH', `/api/chat/messages/${posted.id}`, { content: contentOf('b') }, { 'if-match': '"7"' })).statusCode, 412)
      assert.equal((await send(app, 'POST', `/api/chat/streams/${two}/messages`, { content: contentOf('c') })).statusCode, 201)
      assert.deepEqual((await listEvents(app.database.db, one, 0, 10)).map((e) => e.id), ['1'])
      assert.deepEqual((await listEvents(app.database.db, two, 0, 10)).map((e) => e.id), ['1'])
    })

    it('a rolled-back transaction leaves no event and no hole in the ids', async () => {
      const streamId = await newStream()
      const db = app.database.db
      await db.transaction().execute((trx) => appendEvent(trx, { workspaceId, streamId, type: 'run.created', data: { n: 1 } }))
      await assert.rejects(
        db.transaction().execute(async (trx) => {
          await appendEvent(trx, { workspaceId, streamId, type: 'run.updated', data: { n: 2 } })
          throw new Error('the change failed')
        }),
        /the change failed/,
      )
      await db.transaction().execute((trx) => appendEvent(trx, { workspaceId, streamId, type: 'run.updated', data: { n: 3 } }))
      assert.deepEqual((await listEvents(db, streamId, 0, 10)).map((e) => [e.id, e.data]), [['1', { n: 1 }], ['2', { n: 3 }]])
    })

    it("a transaction's events take ids in the order they were appended, per stream, and none if it fails at the end", async () => {
      const one = await newStream()
      const two = await newStream()
      const db = app.database.db
      await db.transaction().execute(async (trx) => {
        await appendEvent(trx, { workspaceId, streamId: two, type: 'run.created', data: { n: 1 } })
        await appendEvent(trx, { workspaceId, streamId: one, type: 'run.created', data: { n: 2 } })
        await appendEvent(trx, { workspaceId, streamId: two, type: 'run.updated', data: { n: 3 } })
        await appendEvent(trx, { workspaceId, streamId: one, type: 'run.updated', data: { n: 4 } })
      })
      assert.deepEqual((await listEvents(db, one, 0, 10)).map((e) => [e.id, e.type, e.data]), [['1', 'run.created', { n: 2 }], ['2', 'run.updated', { n: 4 }]])
      assert.deepEqual((await listEvents(db, two, 0, 10)).map((e) => [e.id, e.type, e.data]), [['1', 'run.created', { n: 1 }], ['2', 'run.updated', { n: 3 }]])
      // An event of a stream that does not exist fails the whole change, wherever the event is written.
      const gone = '0190d5a8-0000-7000-8000-0000000000ff'
      await assert.rejects(
        db.transaction().execute(async (trx) => {
          await appendEvent(trx, { workspaceId, streamId: one, type: 'run.updated', data: { n: 5 } })
          await appendEvent(trx, { workspaceId, streamId: gone, type: 'run.updated', data: { n: 6 } })
        }),
      )
      assert.deepEqual((await listEvents(db, one, 0, 10)).map((e) => e.id), ['1', '2'])
      assert.deepEqual(await streamHead(db, one), { lastId: 2, purgedThrough: 0 })
    })

    if (dialect === 'postgres') {
      it("a writer does not wait for another transaction's event until that one's last statement: ids in commit order", { timeout: 10_000 }, async () => {
        const streamId = await newStream()
        const db = app.database.db
        let letGo!: () => void
        const held = new Promise<void>((resolve) => (letGo = resolve))
        let appended!: () => void
        const hasAppended = new Promise<void>((resolve) => (appended = resolve))
        // The first transaction appends, then stays open until the second has committed its own event.
        const first = db.transaction().execute(async (trx) => {
          await appendEvent(trx, { workspaceId, streamId, type: 'run.created', data: { who: 'first' } })
          appended()
          await held
        })
        await hasAppended
        await db.transaction().execute((trx) => appendEvent(trx, { workspaceId, streamId, type: 'run.created', data: { who: 'second' } }))
        letGo()
        await first
        assert.deepEqual((await listEvents(db, streamId, 0, 10)).map((e) => [e.id, e.data]), [['1', { who: 'second' }], ['2', { who: 'first' }]])
      })

      it("a transaction's events of a stream wake listeners with one notification", async () => {
        const streamId = await newStream()
        const pg = (await import('pg')).default
        const listener = new pg.Client({ connectionString: app.config.databaseUrl })
        await listener.connect()
        const payloads: string[] = []
        listener.on('notification', (message) => {
          if (message.payload?.startsWith(`${streamId}:`)) payloads.push(message.payload)
        })
        await listener.query('listen tandem_events')
        await app.database.db.transaction().execute(async (trx) => {
          for (let n = 1; n <= 3; n++) await appendEvent(trx, { workspaceId, streamId, type: 'run.updated', data: { n } })
        })
        // A marker notification sent after the commit arrives after the transaction's own (one connection, in order).
        await listener.query(`select pg_notify('tandem_events', '${streamId}:marker')`)
        while (!payloads.includes(`${streamId}:marker`)) await new Promise((resolve) => listener.once('notification', resolve))
        await listener.end()
        assert.deepEqual(payloads, [`${streamId}:3`, `${streamId}:marker`])
      })
    }

    it('concurrent writers to one stream: every id once, in order, and no reader ever sees a gap', async () => {
      const streamId = await newStream()
      const db = app.database.db
      const writers = 120
      let done = false
      const gaps: string[] = []
      let reads = 0
      const reader = (async () => {
        while (!done) {
          const ids = (await listEvents(db, streamId, 0, 1000)).map((e) => Number(e.id))
          reads++
          // Yield to the event loop: on SQLite a read completes in microtasks and would starve the writers.
          await new Promise((resolve) => setImmediate(resolve))
          ids.forEach((id, i) => {
            if (id !== i + 1) gaps.push(`saw ${ids.join(',')}`)
          })
        }
      })()
      const posts = Array.from({ length: writers }, (_, i) =>
        i % 3 === 0
          ? db.transaction().execute((trx) => appendEvent(trx, { workspaceId, streamId, type: 'run.updated', data: { i } }))
          : send(app, 'POST', `/api/chat/streams/${streamId}/messages`, { content: contentOf(`m${i}`) }),
      )
      await Promise.all(posts)
      done = true
      await reader
      assert.deepEqual(gaps.slice(0, 3), [])
      assert.ok(reads > 1)
      const ids = (await listEvents(db, streamId, 0, 1000)).map((e) => Number(e.id))
      assert.deepEqual(ids, Array.from({ length: writers }, (_, i) => i + 1))
    })
  })
}
