// Fan-out beyond one connection: slow clients are dropped, shutdown ends open streams, two instances on
// PostgreSQL see each other's events, the LISTEN connection reconnects and catches up, SIGTERM is not held up.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import type { FastifyInstance } from 'fastify'
import { TEST_SECRET_KEY, build, dialects, freshDatabase, send } from '../helpers.js'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { appendEvent } from '../../src/events/store.js'
import { ensureWorkspace } from '../../src/workspaces/store.js'
import { startServer } from '../child-server.js'
import { openEventStream } from './sse-client.js'
import { waitFor } from '../wait.js'

const contentOf = (text: string) => ({ blocks: [{ type: 'rich_text', elements: [{ type: 'paragraph', children: [{ type: 'text', text }] }] }] })
const urlOf = (app: FastifyInstance) => `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const until = (check: () => boolean, what: string) => waitFor(check, { timeoutMs: 5000, what })

for (const dialect of dialects()) {
  describe(`event fan-out (${dialect})`, () => {
    it('a client that stops reading is dropped once its unsent output passes TANDEM_SSE_MAX_BUFFER_BYTES; it resumes where it was', async () => {
      const app = await build(dialect, { TANDEM_AUTH: 'local', TANDEM_SSE_MAX_BUFFER_BYTES: '65536' })
      try {
        await app.listen({ port: 0, host: '127.0.0.1' })
        const streamId = (await send(app, 'POST', '/api/streams', { name: 'slow' })).json().id
        const workspaceId = await ensureWorkspace(app.database.db, 'default')
        const sse = await openEventStream(`${urlOf(app)}/api/streams/${streamId}/events?after=0`)
        sse.response.pause()
        // Events are at most 64 KiB (docs/runs-and-events.md "Events"): 200 × 60 KB, more than the kernel's socket buffers hold,
        // so the server's own buffer grows.
        const big = 'x'.repeat(60 * 1024)
        const N = 200
        for (let i = 0; i < N; i++) await app.database.db.transaction().execute((trx) => appendEvent(trx, { workspaceId, streamId, type: 'run.updated', data: { i, big } }))
        await until(() => app.events.readerCount === 0, 'the slow client to be dropped')
        sse.response.resume()
        await sse.ended
        const got = sse.messages.filter((m) => m.comment === undefined).map((m) => Number(m.id))
        assert.ok(got.length < N, `the slow client got all ${got.length} events`)
        assert.deepEqual(got, got.map((_, i) => i + 1))
        const resumed = await openEventStream(`${urlOf(app)}/api/streams/${streamId}/events`, { 'last-event-id': String(got.length) })
        const rest = await resumed.events(N - got.length)
        assert.equal(rest[0]?.id, String(got.length + 1))
        assert.equal(rest[rest.length - 1]?.id, String(N))
        resumed.close()
      } finally {
        await app.close()
      }
    })

    it('app.close() ends open event streams instead of waiting for them', async () => {
      const app = await build(dialect, { TANDEM_AUTH: 'local' })
      await app.listen({ port: 0, host: '127.0.0.1' })
      const streamId = (await send(app, 'POST', '/api/streams', { name: 'closing' })).json().id
      const streams = await Promise.all([1, 2, 3].map(() => openEventStream(`${urlOf(app)}/api/streams/${streamId}/events`)))
      const closed = app.close()
      await Promise.race([closed, sleep(5000).then(() => assert.fail('app.close() waited for the open streams'))])
      await Promise.all(streams.map((s) => s.ended))
    })
  })
}

if (dialects().includes('postgres')) {
  describe('event fan-out across instances (postgres)', () => {
    let one: FastifyInstance
    let two: FastifyInstance
    let drop: () => Promise<void>
    before(async () => {
      const database = await freshDatabase('postgres')
      drop = database.drop
      const config = loadConfig({ LOG_LEVEL: 'silent', TANDEM_AUTH: 'local', TANDEM_WORKERS: '0', TANDEM_SECRET_KEY: TEST_SECRET_KEY, DATABASE_URL: database.url })
      one = await buildApp(config, { connect: { schema: database.schema, poolSize: 4 } })
      two = await buildApp(config, { connect: { schema: database.schema, poolSize: 4 } })
      await one.listen({ port: 0, host: '127.0.0.1' })
      await two.listen({ port: 0, host: '127.0.0.1' })
    })
    after(async () => {
      await one.close()
      await two.close()
      await drop()
    })

    it('an event written through one instance reaches an SSE client of the other within a second', async () => {
      const streamId = (await send(one, 'POST', '/api/streams', { name: 'shared' })).json().id
      const sse = await openEventStream(`${urlOf(two)}/api/streams/${streamId}/events`)
      try {
        for (let i = 1; i <= 5; i++) {
          const started = Date.now()
          assert.equal((await send(one, 'POST', `/api/chat/streams/${streamId}/messages`, { content: contentOf(`hop ${i}`) })).statusCode, 201)
          const [, ...rest] = await sse.events(i, 1000)
          void rest
          assert.ok(Date.now() - started < 1000)
        }
        assert.deepEqual(sse.messages.filter((m) => m.comment === undefined).map((m) => m.id), ['1', '2', '3', '4', '5'])
      } finally {
        sse.close()
      }
    })

    it('when the LISTEN connection drops, the instance reconnects and catches up on what it missed', async () => {
      const streamId = (await send(one, 'POST', '/api/streams', { name: 'reconnect' })).json().id
      const sse = await openEventStream(`${urlOf(two)}/api/streams/${streamId}/events`)
      try {
        const pid = two.events.listenerPid
        assert.ok(pid)
        await sql`select pg_terminate_backend(${pid})`.execute(one.database.db)
        // Written while the listener is down: its NOTIFY reaches nobody on instance two.
        await send(one, 'POST', `/api/chat/streams/${streamId}/messages`, { content: contentOf('while down') })
        await sse.events(1, 10000)
        await until(() => two.events.listenerPid !== undefined && two.events.listenerPid !== pid, 'instance two to listen again')
        await send(one, 'POST', `/api/chat/streams/${streamId}/messages`, { content: contentOf('after') })
        const events = await sse.events(2, 5000)
        assert.deepEqual(events.map((m) => JSON.parse(m.data as string).data.text), ['while down', 'after'])
      } finally {
        sse.close()
      }
    })
  })
}

describe('the server process with open event streams', () => {
  it('SIGTERM ends the open streams and exits 0 promptly', async () => {
    const file = join(tmpdir(), `tandem-events-${process.pid}.db`)
    const server = startServer({ DATABASE_URL: `sqlite:${file}` }, { stderr: 'ignore' })
    try {
      const base = await server.url
      const stream = (await (await fetch(`${base}/api/streams`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 's' }) })).json()) as { id: string }
      const clients = await Promise.all([1, 2].map(() => openEventStream(`${base}/api/streams/${stream.id}/events`)))
      const started = Date.now()
      assert.equal((await server.stop()).code, 0)
      assert.ok(Date.now() - started < 5000, `took ${Date.now() - started} ms`)
      await Promise.all(clients.map((c) => c.ended))
    } finally {
      await server.stop('SIGKILL')
      for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true })
    }
  })
})
