// The in-process job worker of SQLite deployments (one process owns the database file). Jobs are rows of
// `jobs`; the worker takes due rows (`locked_at` set), runs their handler, and deletes them when done. It is
// woken at once by each enqueue into the table, and by a timer for the earliest future job; the timer is only a wake-up, the
// schedule lives in the table, so a restart loses nothing: start() takes back every job still locked.
// A job enqueued with startAtCommit skips the claim: its row is written as taken and, when its transaction
// commits, it joins a queue in memory that free slots take from while the table has nothing due.
import type { FastifyInstance } from 'fastify'
import { sql, type Expression, type Kysely, type Selectable } from 'kysely'
import type { Database } from '../db/database.js'
import { prepared } from '../db/prepared.js'
import { sqliteDriverOf } from '../db/sqlite-driver.js'
import { newId, now } from '../ids.js'
import type { AnyTaskList } from './registry.js'
import { JOB_RETRY_BACKOFF, backoffMs } from '../net/backoff.js'
import type { JobTable } from './jobs.table.js'

export type { JobTable }


type JobRow = Selectable<JobTable>

// setTimeout's limit; a job further away is looked at again then.
const MAX_TIMER_MS = 2 ** 31 - 1
/** Jobs handed over at their commit that may wait in memory for a slot (with those awaiting their commit). */
export const QUEUE_LIMIT = 1000

// The worker's queries on every job, compiled once (src/db/prepared.ts).
const insertRow = prepared(
  9,
  (
    db, id: Expression<string>, name: Expression<string>, payload: Expression<string>, runAt: Expression<string>, attempts: Expression<number>,
    maxAttempts: Expression<number>, jobKey: Expression<string | null>, lockedAt: Expression<string | null>, lastError: Expression<string | null>,
  ) => db.insertInto('jobs').values({ id, name, payload, run_at: runAt, attempts, max_attempts: maxAttempts, job_key: jobKey, locked_at: lockedAt, last_error: lastError }),
)
const removeOne = prepared(1, (db, key: Expression<string>) => db.deleteFrom('jobs').where('job_key', 'in', [key]).where('locked_at', 'is', null))
const removeTwo = prepared(2, (db, first: Expression<string>, second: Expression<string>) => db.deleteFrom('jobs').where('job_key', 'in', [first, second]).where('locked_at', 'is', null))
// The limit is written into the SQL (one statement per limit, at most `concurrency` of them): SQLite plans a
// statement again at every run when a bound parameter is its LIMIT.
const claimDueBy = new Map<number, (db: Kysely<Database>, lockedAt: string) => Promise<JobRow[]>>()
function claimDue(db: Kysely<Database>, lockedAt: string, limit: number): Promise<JobRow[]> {
  let claim = claimDueBy.get(limit)
  if (!claim) {
    claim = prepared(1, (db, at: Expression<string>) => {
      const due = db.selectFrom('jobs').select('id').where('locked_at', 'is', null).where('run_at', '<=', at).orderBy('run_at').orderBy('id').limit(sql.lit(limit))
      return db.updateTable('jobs').set({ locked_at: at }).where('id', 'in', due).returningAll()
    })
    claimDueBy.set(limit, claim)
  }
  return claim(db, lockedAt)
}
const deleteDoneQuery = (db: Kysely<Database>, id: Expression<string> | string) => db.deleteFrom('jobs').where('id', '=', id)
const deleteDone = prepared(1, deleteDoneQuery)

/** Graphile-worker's back-off, so that both databases retry alike: e^attempts seconds, at most e^10 (6 h). */
const retryDelayMs = (attempts: number) => backoffMs(JOB_RETRY_BACKOFF, attempts)

export class SqliteJobWorker {
  private app: FastifyInstance | undefined
  private running = 0
  /**
   * Jobs handed over at their commit (startAtCommit) that wait for a slot: their rows are written as taken, so no
   * claim reads them; a restart takes them back as any running job. Bounded by QUEUE_LIMIT with those awaiting
   * their commit; past it, jobs go through the table.
   */
  private readonly queue: JobRow[] = []
  private awaitingCommit = 0
  /**
   * The table may hold due jobs nobody has claimed (set by every wake-up: an enqueue, a timer, a failure); cleared
   * when a claim finds fewer than it asked for. While clear, a slot that frees takes the next queued job without
   * looking at the table.
   */
  private tableDue = true
  /** Counts the wake-ups (changes to the table): a claim that came back short leaves the table due if one came meanwhile. */
  private tableChanges = 0
  /** deleteDone's SQL text, for a deletion that joins the open batch (writeInBatch). */
  private deleteDoneSql: string | undefined
  private stopped = true
  private filling = false
  private fillAgain = false
  private wakeQueued = false
  private timer: NodeJS.Timeout | undefined
  private readonly abort = new AbortController()
  private idle: (() => void) | undefined

  private readonly db: Kysely<Database>
  private readonly concurrency: number
  private readonly tasks: AnyTaskList

  constructor(
    db: Kysely<Database>,
    concurrency: number,
    tasks: AnyTaskList,
  ) {
    this.db = db
    this.concurrency = concurrency
    this.tasks = tasks
  }

  async enqueue(db: Kysely<Database>, name: string, payload: unknown, runAt: Date, jobKey: string | null, maxAttempts: number, newKey = false, startAtCommit = false): Promise<void> {
    const row: JobRow = {
      id: newId(), name, payload: JSON.stringify(payload), run_at: runAt.toISOString(), attempts: 0, max_attempts: maxAttempts,
      job_key: jobKey, locked_at: null, last_error: null,
    }
    if (startAtCommit && (jobKey === null || newKey) && runAt.getTime() <= Date.now() && this.canStartAtCommit(db)) {
      row.locked_at = now()
      await insertRow(db, row.id, row.name, row.payload, row.run_at, row.attempts, row.max_attempts, row.job_key, row.locked_at, row.last_error)
      // After the insert: a row that failed to be written is never queued.
      if (this.startAtCommit(db, row)) return
      // No transaction to wait for after all: the row goes back to the table.
      await db.updateTable('jobs').set({ locked_at: null }).where('id', '=', row.id).execute()
      return this.wake()
    }
    if (jobKey !== null && !newKey) {
      const replaced = await db
        .updateTable('jobs')
        .set({ name, payload: row.payload, run_at: row.run_at, attempts: 0, max_attempts: maxAttempts, last_error: null })
        .where('job_key', '=', jobKey)
        .where('locked_at', 'is', null)
        .executeTakeFirst()
      if (Number(replaced.numUpdatedRows) > 0) return this.wake()
      // A running job keeps running; it gives up its key to the new one.
      await db.updateTable('jobs').set({ job_key: null }).where('job_key', '=', jobKey).execute()
    }
    await insertRow(db, row.id, row.name, row.payload, row.run_at, row.attempts, row.max_attempts, row.job_key, row.locked_at, row.last_error)
    // The worker's query waits for the connection, so it sees the row once the caller's transaction commits.
    this.wake()
  }

  /** Whether a job enqueued in `db` can join the queue at its commit: a transaction, a running worker, room in the queue. */
  private canStartAtCommit(db: Kysely<Database>): boolean {
    return !this.stopped && this.concurrency > 0 && this.awaitingCommit + this.queue.length < QUEUE_LIMIT && db.isTransaction
  }

  /**
   * Has `row` (written as taken, `locked_at` set) join the queue when the caller's transaction commits; nothing is
   * queued if the transaction is abandoned. False when no transaction holds the connection.
   */
  private startAtCommit(db: Kysely<Database>, row: JobRow): boolean {
    const handed = sqliteDriverOf(db)?.afterCommit({
      committed: () => {
        this.awaitingCommit--
        if (this.stopped) {
          // Too late to start: left for the next start, as a job interrupted by a shutdown is.
          void this.db.updateTable('jobs').set({ locked_at: null }).where('id', '=', row.id).execute().catch(() => undefined)
          return
        }
        this.queue.push(row)
        this.drain()
      },
      abandoned: () => {
        this.awaitingCommit--
      },
    })
    if (handed) this.awaitingCommit++
    return handed === true
  }

  /** Starts queued jobs in the free slots; not while a fill is claiming (it counted the free slots: it drains when done). */
  private drain(): void {
    if (this.filling) return
    while (!this.stopped && this.running < this.concurrency && this.queue.length > 0) {
      this.running++
      void this.runJob(this.queue.shift() as JobRow)
    }
  }

  /** A slot freed: the table first when it may hold due jobs (so timers and retries are never starved), else the queue. */
  private next(): void {
    if (this.tableDue) this.scheduleFill()
    else this.drain()
  }

  async remove(db: Kysely<Database>, jobKeys: string[]): Promise<void> {
    if (jobKeys.length === 1) await removeOne(db, jobKeys[0] as string)
    else if (jobKeys.length === 2) await removeTwo(db, jobKeys[0] as string, jobKeys[1] as string)
    else if (jobKeys.length > 0) await db.deleteFrom('jobs').where('job_key', 'in', jobKeys).where('locked_at', 'is', null).execute()
  }

  async start(app: FastifyInstance): Promise<void> {
    this.app = app
    if (this.concurrency === 0) return
    // One process per SQLite file: whatever is locked was running when the last process stopped.
    const resumed = await this.db.updateTable('jobs').set({ locked_at: null }).where('locked_at', 'is not', null).executeTakeFirst()
    if (Number(resumed.numUpdatedRows) > 0) app.log.info({ jobs: Number(resumed.numUpdatedRows) }, 'resuming jobs that were running at the last stop')
    this.stopped = false
    this.wake()
  }

  async stop(): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    this.abort.abort()
    if (this.running > 0) await new Promise<void>((resolve) => (this.idle = resolve))
  }

  /** The table changed (a job enqueued, a timer due, a job back after a failure): look at it. */
  wake(): void {
    this.tableDue = true
    this.tableChanges++
    this.scheduleFill()
  }

  private scheduleFill(): void {
    if (this.stopped || this.wakeQueued) return
    this.wakeQueued = true
    setImmediate(() => {
      this.wakeQueued = false
      void this.fill()
    })
  }

  private async fill(): Promise<void> {
    if (this.stopped) return
    if (this.filling) {
      this.fillAgain = true
      return
    }
    if (!this.tableDue) return this.drain()
    this.filling = true
    const seen = this.tableChanges
    try {
      // The table's due jobs (retries, timers, jobs enqueued without startAtCommit) up to the free slots.
      let short = false
      while (!this.stopped && this.running < this.concurrency) {
        const limit = this.concurrency - this.running
        const rows = await claimDue(this.db, now(), limit)
        for (const row of rows) {
          this.running++
          void this.runJob(row)
        }
        if (rows.length < limit) {
          short = true
          break
        }
      }
      // Nothing more is due now: wake up when the next job is. (At full concurrency the table is looked at again
      // when a job ends, next(): a timer for a job already due would only spin.)
      if (short && !this.stopped) {
        this.tableDue = this.tableChanges !== seen
        const next = await this.db.selectFrom('jobs').select('run_at').where('locked_at', 'is', null).orderBy('run_at').limit(1).executeTakeFirst()
        clearTimeout(this.timer)
        if (next) this.timer = setTimeout(() => this.wake(), Math.min(Math.max(Date.parse(next.run_at) - Date.now(), 0), MAX_TIMER_MS))
      }
    } catch (error) {
      this.app?.log.error({ err: error }, 'the job worker could not read the jobs table; retrying in 1 s')
      clearTimeout(this.timer)
      this.timer = setTimeout(() => this.wake(), 1000)
    } finally {
      this.filling = false
      if (this.fillAgain) {
        this.fillAgain = false
        this.scheduleFill()
      } else this.drain()
    }
  }

  private async runJob(row: JobRow): Promise<void> {
    const attempt = row.attempts + 1
    try {
      const handler = Object.hasOwn(this.tasks, row.name) ? this.tasks[row.name] : undefined
      if (!handler) throw new Error(`no handler for job ${row.name}`)
      await handler(JSON.parse(row.payload) as never, { app: this.app as FastifyInstance, attempt, jobKey: row.job_key, signal: this.abort.signal })
      // With the batch of writes of the moment (sqlite-driver.ts), instead of committing that batch early and
      // then itself: as one statement of the batch when the connection is free, else in a transaction.
      this.deleteDoneSql ??= deleteDoneQuery(this.db, row.id).compile().sql
      const deleted = sqliteDriverOf(this.db)?.writeInBatch(this.deleteDoneSql, [row.id])
      await (deleted ?? this.db.transaction().execute((trx) => deleteDone(trx, row.id)))
    } catch (error) {
      await this.recordFailure(row, attempt, error).catch((failure) => this.app?.log.error({ err: failure, job: row.name }, 'could not record a job failure'))
    } finally {
      this.running--
      if (this.stopped && this.running === 0) this.idle?.()
      this.next()
    }
  }

  private async recordFailure(row: JobRow, attempt: number, error: unknown): Promise<void> {
    // The job goes back to the table (to run again later, or at the next start): the table is looked at again.
    this.tableDue = true
    this.tableChanges++
    const message = error instanceof Error ? error.message : String(error)
    if (this.stopped) {
      // Interrupted by shutdown: not the job's fault; it runs again at the next start.
      await this.db.updateTable('jobs').set({ locked_at: null }).where('id', '=', row.id).execute()
      return
    }
    if (attempt >= row.max_attempts) {
      this.app?.log.error({ job: row.name, jobId: row.id, attempts: attempt, error: message }, 'job failed for the last time; dropped')
      await this.db.deleteFrom('jobs').where('id', '=', row.id).execute()
      return
    }
    this.app?.log.warn({ job: row.name, jobId: row.id, attempt, error: message }, 'job failed; will retry')
    await this.db
      .updateTable('jobs')
      .set({ attempts: attempt, locked_at: null, last_error: message.slice(0, 2000), run_at: new Date(Date.now() + retryDelayMs(attempt)).toISOString() })
      .where('id', '=', row.id)
      .execute()
  }
}
