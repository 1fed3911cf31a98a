// test lane: clock — durable jobs that must run late, on the real clock (scripts/test.mjs).
// The durable job layer on both databases: jobs exist only if their transaction commits, run once, run
// later when asked, replace each other by key, are retried when they throw, and survive a restart.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import pg from 'pg'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { enqueueJob, removeJob, type AnyTaskList, type JobContext } from '../../src/jobs/index.js'
import { TEST_SECRET_KEY, dialects, freshDatabase, type TestDatabase } from '../helpers.js'
import { waitFor as waitUntil } from '../wait.js'
import { QUEUE_LIMIT } from '../../src/jobs/sqlite.js'

const seen = new Map<string, Array<{ value: number; attempt: number }>>()
let failuresLeft = new Map<string, number>()

// This file's own jobs, handed to buildApp beside the service's task list.
const tasks: AnyTaskList = {}
tasks['test.record'] = (async (payload: { tag: string; value: number }, context: JobContext) => {
  const left = failuresLeft.get(payload.tag) ?? 0
  if (left > 0) {
    failuresLeft.set(payload.tag, left - 1)
    throw new Error('failing on purpose')
  }
  seen.set(payload.tag, [...(seen.get(payload.tag) ?? []), { value: payload.value, attempt: context.attempt }])
}) as AnyTaskList[string]

// Jobs of the scattered-times test: each records when it ran; a chained one enqueues a follow-up due soon.
const scattered = new Map<string, { due: Map<string, number>; ran: Map<string, number[]>; active: number }>()
tasks['test.scattered'] = (async (payload: { prefix: string; tag: string; chain: boolean; slowMs: number }, context: JobContext) => {
  const state = scattered.get(payload.prefix)
  if (!state) return
  state.active++
  try {
    await runScattered(state, payload, context)
  } finally {
    state.active--
  }
}) as AnyTaskList[string]
async function runScattered(
  state: { due: Map<string, number>; ran: Map<string, number[]> },
  payload: { prefix: string; tag: string; chain: boolean; slowMs: number },
  context: JobContext,
): Promise<void> {
  state.ran.set(payload.tag, [...(state.ran.get(payload.tag) ?? []), Date.now()])
  if (payload.chain) {
    const tag = `${payload.tag}-next`
    const runAt = Date.now() + 50 + Math.floor(Math.random() * 500)
    state.due.set(tag, runAt)
    await context.app.database.db.transaction().execute(async (trx) => {
      await enqueueJob(trx, 'test.scattered', { prefix: payload.prefix, tag, chain: false, slowMs: 0 }, { runAt: new Date(runAt) })
    })
  }
  if (payload.slowMs > 0) await sleep(payload.slowMs)
}

const waitFor = (check: () => boolean, timeoutMs = 10000, what = 'the jobs to run') => waitUntil(check, { timeoutMs, what })

/**
 * How many of this file's jobs (named `prefix`…) are still in the queue, taken or not: a job leaves it only when
 * it is done, so none left means every job that was ever committed has run to its end.
 */
async function queued(app: FastifyInstance, prefix: string): Promise<number> {
  const db = app.database.db
  if (app.database.dialect === 'sqlite') {
    const row = await db.selectFrom('jobs').select((eb) => eb.fn.countAll<number>().as('n')).where('name', 'like', `${prefix}%`).executeTakeFirstOrThrow()
    return Number(row.n)
  }
  const schema = app.database.schema ? `${app.database.schema}_jobs` : 'graphile_worker'
  const { rows } = await sql<{ n: string }>`
    select count(*) as n from ${sql.id(schema, '_private_jobs')} j join ${sql.id(schema, '_private_tasks')} t on t.id = j.task_id
    where t.identifier like ${`${prefix}%`}`.execute(db)
  return Number(rows[0]?.n)
}

// Dropping a PostgreSQL database ends the connections still open to it; one of a closed app's pools ending that
// way would be an error. Wait until the server has none left (SQLite: nothing to wait for).
async function settle(database: TestDatabase): Promise<void> {
  if (!database.url.startsWith('postgres')) return
  const name = new URL(database.url).pathname.slice(1)
  const admin = new pg.Client({ connectionString: process.env.TANDEM_TEST_POSTGRES_URL })
  await admin.connect()
  try {
    await waitUntil(async () => Number((await admin.query('select count(*) as n from pg_stat_activity where datname = $1', [name])).rows[0].n) === 0, { what: `the connections to ${name} to close` })
  } finally {
    await admin.end()
  }
}

for (const dialect of dialects()) {
  describe(`jobs (${dialect})`, () => {
    it('runs committed jobs once, never rolled-back ones, future ones on time, and keyed ones replaced', { timeout: 60000 }, async () => {
      const database = await freshDatabase(dialect, { ownDatabase: true })
      const app = await buildApp(loadConfig({ LOG_LEVEL: 'silent', TANDEM_SECRET_KEY: TEST_SECRET_KEY, DATABASE_URL: database.url, TANDEM_WORKERS: '4' }), { connect: { schema: database.schema, poolSize: 4 }, extraTasks: tasks })
      try {
        await app.ready()
        const { db } = app.database
        const tag = `${dialect}-basic-${Math.random()}`
        await db.transaction().execute(async (trx) => enqueueJob(trx, 'test.record', { tag, value: 1 }))
        await db.transaction().execute(async (trx) => {
          await enqueueJob(trx, 'test.record', { tag, value: 2 })
          throw new Error('roll back')
        }).catch(() => {})
        await waitFor(() => (seen.get(tag) ?? []).length >= 1)
        const later = `${dialect}-later-${Math.random()}`
        const start = Date.now()
        await enqueueJob(db, 'test.record', { tag: later, value: 3 }, { runAt: new Date(Date.now() + 1500) })
        // Replaced by key: only the second payload runs.
        const keyed = `${dialect}-keyed-${Math.random()}`
        await enqueueJob(db, 'test.record', { tag: keyed, value: 4 }, { runAt: new Date(Date.now() + 1000), jobKey: keyed })
        await enqueueJob(db, 'test.record', { tag: keyed, value: 5 }, { runAt: new Date(Date.now() + 1000), jobKey: keyed })
        const removed = `${dialect}-removed-${Math.random()}`
        await enqueueJob(db, 'test.record', { tag: removed, value: 6 }, { runAt: new Date(Date.now() + 1000), jobKey: removed })
        await removeJob(db, removed)
        await waitFor(() => (seen.get(later) ?? []).length >= 1)
        assert.ok(Date.now() - start >= 1400, 'a future job does not run early')
        await waitFor(() => (seen.get(keyed) ?? []).length >= 1)
        // Nothing more can run once the queue holds none of them: a second run, the rolled-back, the replaced or the
        // removed job would each have had to be in it.
        await waitUntil(async () => (await queued(app, 'test.record')) === 0, { what: 'the queue to drain' })
        assert.deepEqual(seen.get(tag)?.map((s) => s.value), [1], 'the committed job ran once; the rolled-back one never')
        assert.deepEqual(seen.get(keyed)?.map((s) => s.value), [5])
        assert.equal(seen.get(removed), undefined)
      } finally {
        await app.close()
        await settle(database)
        await database.drop()
      }
    })

    // the wake-up of a job due later is never lost. 300 jobs due at scattered times over the
    // next 2 s, enqueued by 30 concurrent transactions (some rolled back) while the jobs that run enqueue more,
    // and a worker kept at its concurrency limit by slow jobs. Each committed job runs exactly once, never
    // before its time and within DUE_BOUND_MS after it (a lost wake-up is a job that never runs; PostgreSQL
    // finds future jobs by polling every second, hence the second in the bound).
    it('runs every delayed job once, on time, under concurrent load', { timeout: 90000 }, async () => {
      const DUE_BOUND_MS = 5000
      const database = await freshDatabase(dialect, { ownDatabase: true })
      const app = await buildApp(loadConfig({ LOG_LEVEL: 'silent', TANDEM_SECRET_KEY: TEST_SECRET_KEY, DATABASE_URL: database.url, TANDEM_WORKERS: '3' }), { connect: { schema: database.schema, poolSize: 6 }, extraTasks: tasks })
      const prefix = `${dialect}-scatter-${Math.random()}`
      const due = new Map<string, number>()
      const ran = new Map<string, number[]>()
      const state = { due, ran, active: 0 }
      scattered.set(prefix, state)
      try {
        await app.ready()
        const { db } = app.database
        const writers = Array.from({ length: 30 }, async (_, writer) => {
          for (let i = 0; i < 10; i++) {
            const tag = `${prefix}-${writer}-${i}`
            const runAt = Date.now() + Math.floor(Math.random() * 2000)
            const rollBack = i === 9 && writer % 3 === 0
            await db.transaction().execute(async (trx) => {
              await enqueueJob(trx, 'test.scattered', { prefix, tag, chain: i % 4 === 0, slowMs: i % 5 === 0 ? 150 : 0 }, { runAt: new Date(runAt) })
              if (rollBack) throw new Error('roll back')
              due.set(tag, runAt)
            }).catch(() => {})
            // Random gaps between the writers' transactions, so that they interleave differently each run.
            await sleep(Math.floor(Math.random() * 30))
          }
        })
        await Promise.all(writers)
        await waitFor(() => [...due.keys()].every((tag) => ran.has(tag)) && Date.now() > Math.max(...due.values()) + 1000, 60000)
        // A job runs again only from the queue: once it holds none and no handler is running, every run is counted.
        await waitUntil(async () => (await queued(app, 'test.scattered')) === 0 && state.active === 0, { what: 'the queue to drain' })
        const late: string[] = []
        for (const [tag, at] of due) {
          const runs = ran.get(tag) ?? []
          assert.equal(runs.length, 1, `${tag} ran ${runs.length} times`)
          assert.ok(runs[0]! >= at - 5, `${tag} ran ${at - runs[0]!} ms early`)
          if (runs[0]! > at + DUE_BOUND_MS) late.push(`${tag} +${runs[0]! - at} ms`)
        }
        assert.deepEqual(late, [], 'every job ran within its due time plus the bound')
        assert.equal([...ran.keys()].filter((tag) => !due.has(tag)).length, 0, 'no rolled-back job ran')
      } finally {
        scattered.delete(prefix)
        await app.close()
        await settle(database)
        await database.drop()
      }
    })

    it('retries a job that throws, with the attempt number', { timeout: 60000 }, async () => {
      const database = await freshDatabase(dialect, { ownDatabase: true })
      const app = await buildApp(loadConfig({ LOG_LEVEL: 'silent', TANDEM_SECRET_KEY: TEST_SECRET_KEY, DATABASE_URL: database.url, TANDEM_WORKERS: '2' }), { connect: { schema: database.schema, poolSize: 4 }, extraTasks: tasks })
      try {
        await app.ready()
        const tag = `${dialect}-retry-${Math.random()}`
        failuresLeft = new Map([[tag, 1]])
        await enqueueJob(app.database.db, 'test.record', { tag, value: 7 })
        await waitFor(() => (seen.get(tag) ?? []).length >= 1, 20000)
        assert.deepEqual(seen.get(tag), [{ value: 7, attempt: 2 }])
      } finally {
        await app.close()
        await settle(database)
        await database.drop()
      }
    })

    it('keeps jobs enqueued by an instance that runs none (TANDEM_WORKERS=0) and runs them on the next start', { timeout: 60000 }, async () => {
      const database = await freshDatabase(dialect, { ownDatabase: true })
      const config = (workers: string) => loadConfig({ LOG_LEVEL: 'silent', TANDEM_SECRET_KEY: TEST_SECRET_KEY, DATABASE_URL: database.url, TANDEM_WORKERS: workers })
      const tag = `${dialect}-idle-${Math.random()}`
      try {
        const idle = await buildApp(config('0'), { connect: { schema: database.schema, poolSize: 4 }, extraTasks: tasks })
        await idle.ready()
        await enqueueJob(idle.database.db, 'test.record', { tag, value: 8 })
        // No event says that a runner which should not exist did not take the job: give one the time it would need.
        await sleep(500)
        assert.equal(seen.get(tag), undefined)
        assert.equal(await queued(idle, 'test.record'), 1, 'the job is still queued')
        await idle.close()
        const busy = await buildApp(config('2'), { connect: { schema: database.schema, poolSize: 4 }, extraTasks: tasks })
        try {
          await busy.ready()
          await waitFor(() => (seen.get(tag) ?? []).length >= 1)
        } finally {
          await busy.close()
        }
      } finally {
        await settle(database)
        await database.drop()
      }
    })
  })
}

// Jobs of the handed-over tests: each records when it started; a blocking one waits for its release or the shutdown.
const handed = new Map<string, { started: number[]; completed: number }>()
let releaseBlocked: () => void = () => {}
let blocked = new Promise<void>((resolve) => (releaseBlocked = resolve))
const running = { now: 0, most: 0 }
tasks['test.handed'] = (async (payload: { tag: string; ms: number; block?: boolean }, context: JobContext) => {
  running.most = Math.max(running.most, ++running.now)
  try {
    await handle(payload, context)
  } finally {
    running.now--
  }
}) as AnyTaskList[string]
async function handle(payload: { tag: string; ms: number; block?: boolean }, context: JobContext): Promise<void> {
  const entry = handed.get(payload.tag) ?? { started: [], completed: 0 }
  handed.set(payload.tag, entry)
  entry.started.push(Date.now())
  if (payload.block) {
    await Promise.race([blocked, new Promise((resolve) => context.signal.addEventListener('abort', resolve, { once: true }))])
    if (context.signal.aborted) throw new Error('stopped before it was done')
  } else await sleep(payload.ms) // the job's work, long enough that the slots stay full
  entry.completed++
}

describe('jobs handed over at their commit (startAtCommit, sqlite)', () => {
  const config = (url: string, workers: string) => loadConfig({ LOG_LEVEL: 'silent', TANDEM_SECRET_KEY: TEST_SECRET_KEY, DATABASE_URL: url, TANDEM_WORKERS: workers })

  it('run each committed job once and never a rolled-back one, more of them than slots, written as taken; a due job of the table still runs before the queue drains', { timeout: 60000 }, async () => {
    const database = await freshDatabase('sqlite')
    const app = await buildApp(config(database.url, '2'), { extraTasks: tasks })
    try {
      await app.ready()
      const { db } = app.database
      const prefix = `handed-${Math.random()}`
      const tags = Array.from({ length: 8 }, (_, i) => `${prefix}-${i}`)
      running.most = 0
      for (const tag of tags) {
        await db.transaction().execute((trx) => enqueueJob(trx, 'test.handed', { tag, ms: 150 }, { startAtCommit: true }))
      }
      const rolledBack = `${prefix}-rolled-back`
      await db.transaction().execute(async (trx) => {
        await enqueueJob(trx, 'test.handed', { tag: rolledBack, ms: 0 }, { startAtCommit: true })
        throw new Error('roll back')
      }).catch(() => {})
      // Two run, six wait in the worker's queue: every row is already taken (no claim will read it).
      const rows = await db.selectFrom('jobs').select(['payload', 'locked_at']).where('name', '=', 'test.handed').execute()
      // On a busy machine the first jobs may already be done (a done job's row is deleted): the rest are all there.
      const finished = tags.filter((tag) => handed.get(tag)?.completed === 1).length
      assert.ok(rows.length <= 8 && rows.length >= 8 - finished, `${rows.length} rows, ${finished} jobs done`)
      assert.ok(rows.every((row) => row.locked_at !== null), 'handed-over jobs are written as taken')
      // A job of the table, due while the queue still holds work: the next freed slot takes it before the queue.
      const fromTable = `${prefix}-table`
      const due = Date.now() + 200
      await enqueueJob(db, 'test.handed', { tag: fromTable, ms: 0 }, { runAt: new Date(due) })

      await waitFor(() => tags.every((tag) => handed.get(tag)?.completed === 1) && handed.get(fromTable)?.completed === 1)
      for (const tag of tags) assert.equal(handed.get(tag)?.started.length, 1, `${tag} ran once`)
      assert.equal(handed.get(rolledBack), undefined, 'the rolled-back job never ran')
      const lastQueuedStart = Math.max(...tags.map((tag) => handed.get(tag)?.started[0] as number))
      const tableStart = handed.get(fromTable)?.started[0] as number
      assert.ok(tableStart >= due, 'not early')
      assert.ok(tableStart < lastQueuedStart, `the table's due job ran before the queue drained (${tableStart - due} ms after its time)`)
      assert.equal(running.most, 2, 'never more jobs at once than TANDEM_WORKERS')
      await waitFor(() => true)
      assert.deepEqual(await db.selectFrom('jobs').select('id').execute(), [], 'every done job is deleted')
    } finally {
      await app.close()
      await database.drop()
    }
  })

  it('jobs still queued when the worker stops are taken back and run at the next start, each to its end once', { timeout: 60000 }, async () => {
    const database = await freshDatabase('sqlite')
    blocked = new Promise<void>((resolve) => (releaseBlocked = resolve))
    const prefix = `restart-${Math.random()}`
    const tags = Array.from({ length: 4 }, (_, i) => `${prefix}-${i}`)
    try {
      const first = await buildApp(config(database.url, '1'), { extraTasks: tasks })
      await first.ready()
      for (const tag of tags) {
        await first.database.db.transaction().execute((trx) => enqueueJob(trx, 'test.handed', { tag, ms: 0, block: true }, { startAtCommit: true }))
      }
      // One runs (and blocks), three wait in the queue; the stop interrupts the one and leaves the three taken.
      await waitFor(() => tags.some((tag) => (handed.get(tag)?.started.length ?? 0) > 0))
      await first.close()
      assert.equal(tags.filter((tag) => (handed.get(tag)?.started.length ?? 0) > 0).length, 1)
      assert.ok(tags.every((tag) => (handed.get(tag)?.completed ?? 0) === 0))

      releaseBlocked()
      const second = await buildApp(config(database.url, '2'), { extraTasks: tasks })
      try {
        await second.ready()
        await waitFor(() => tags.every((tag) => handed.get(tag)?.completed === 1))
        // A job runs again only from the queue (a row, taken or not): none left and none running, every run is counted.
        await waitUntil(async () => (await queued(second, 'test.handed')) === 0 && running.now === 0, { what: 'the queue to drain' })
        assert.deepEqual(tags.map((tag) => handed.get(tag)?.completed), [1, 1, 1, 1])
        assert.deepEqual(await second.database.db.selectFrom('jobs').select('id').execute(), [])
      } finally {
        await second.close()
      }
    } finally {
      releaseBlocked()
      await database.drop()
    }
  })
  it(`holds at most ${QUEUE_LIMIT} handed-over jobs in memory: past that, a job goes to the table as any other`, { timeout: 60000 }, async () => {
    const database = await freshDatabase('sqlite')
    blocked = new Promise<void>((resolve) => (releaseBlocked = resolve))
    const prefix = `bound-${Math.random()}`
    const app = await buildApp(config(database.url, '1'), { extraTasks: tasks })
    try {
      await app.ready()
      const { db } = app.database
      // One job takes the only slot and blocks: every later one waits in the queue, up to its bound.
      await db.transaction().execute((trx) => enqueueJob(trx, 'test.handed', { tag: `${prefix}-first`, ms: 0, block: true }, { startAtCommit: true }))
      await waitFor(() => (handed.get(`${prefix}-first`)?.started.length ?? 0) > 0)
      for (let i = 0; i <= QUEUE_LIMIT; i++) {
        await db.transaction().execute((trx) => enqueueJob(trx, 'test.handed', { tag: `${prefix}-${i}`, ms: 0 }, { startAtCommit: true }))
      }
      const taken = await db.selectFrom('jobs').select('id').where('name', '=', 'test.handed').where('locked_at', 'is not', null).execute()
      const untaken = await db.selectFrom('jobs').select('payload').where('name', '=', 'test.handed').where('locked_at', 'is', null).execute()
      assert.equal(taken.length, 1 + QUEUE_LIMIT, 'the running job and a full queue are written as taken')
      assert.deepEqual(untaken.map((row) => JSON.parse(row.payload).tag), [`${prefix}-${QUEUE_LIMIT}`], 'the one past the bound waits in the table')
      releaseBlocked()
      await waitFor(() => Array.from({ length: QUEUE_LIMIT + 1 }, (_, i) => `${prefix}-${i}`).every((tag) => handed.get(tag)?.completed === 1), 30000)
    } finally {
      releaseBlocked()
      await app.close()
      await database.drop()
    }
  })
})
