// Durable background jobs: work that must happen even if the process dies (deliveries, time-outs, polls).
//
// API (for every feature):
//   JobPayloads (registry.ts)               every job name with its payload type; the handlers are one explicit
//                                            task list (src/task-list.ts) given to createJobs. A handler that
//                                            throws is retried with graphile-worker's back-off (e^attempt s, see
//                                            src/net/backoff.ts JOB_RETRY_BACKOFF; at most `maxAttempts`, default 25).
//   enqueueJob(trx, name, payload, { runAt?, jobKey?, maxAttempts? })
//                                            adds a job INSIDE the caller's transaction: it exists only if the
//                                            transaction commits. A `jobKey` replaces the pending job with that
//                                            key (its payload and run time); a running one is left to finish.
//   removeJob(trx, jobKey)                  drops the pending job with that key (e.g. a time-out no longer due).
//   removeJobsSql(trx, jobKeys)             PostgreSQL: the same as select-list items of a larger statement.
//   addJobSql / addJobCall(trx, args)       PostgreSQL: an add_job call as a select-list item of a larger statement
//                                            (jobsInSql(trx) says whether the database adds jobs so).
//   jobWaits(trx, jobKey)                   whether a job with that key is pending (not taken by a worker yet).
//   createJobs(database, options) / jobs.start(app) / jobs.stop()
//                                            wiring done once by buildApp (see app.ts); `TANDEM_WORKERS` is the
//                                            concurrency, 0 runs no jobs here (an HTTP-only instance).
//
// SQLite (one process): the `jobs` table and an in-process worker, woken at once by enqueueJob and by a timer
// for the next due job (the schedule itself is in the table); at start-up it takes back every job that was
// running when the process stopped. PostgreSQL: graphile-worker 0.17 in the same database (its own schema),
// jobs added with `add_job(...)` on the caller's transaction, so any instance runs any job; a dead instance's
// locked jobs are freed by a live one within TANDEM_FAILOVER_S (src/failover/registry.ts, with workerPoolId()).
// TANDEM_TEST_FAULT can kill the process as a job starts or ends (faults.ts, for the failover tests).
import { EventEmitter } from 'node:events'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import { sql, type Expression, type Kysely, type RawBuilder } from 'kysely'
import { Logger as WorkerLogger, run, runMigrations, type Runner, type TaskList, type WorkerEvents } from 'graphile-worker'
import pg from 'pg'
import type { Database } from '../db/database.js'
import type { Db } from '../db/connect.js'
import { dbContext } from '../db/context.js'
import { SqliteJobWorker } from './sqlite.js'
import { jobFault } from './faults.js'
import type { AnyTaskList, JobPayloads } from './registry.js'

declare module '../db/context.js' {
  interface DbContext {
    /** Where this database's jobs are enqueued (createJobs). */
    jobs?: JobsRuntime
  }
}

export type { AnyTaskList, JobContext, JobHandler, JobName, JobPayloads, TaskList } from './registry.js'

/** A known job's payload type, or anything for a job only a test defines. */
type PayloadOf<K extends string> = K extends keyof JobPayloads ? JobPayloads[K] : unknown

export interface EnqueueOptions {
  runAt?: Date
  jobKey?: string
  /** The key is new (e.g. a new task's): no job can hold it, so there is nothing to replace (SQLite skips the look). */
  newKey?: boolean
  maxAttempts?: number
  /**
   * SQLite: a job due now is handed to this process's worker when the enqueuing transaction commits (its row
   * written as taken, so no claim and no look at the table), and waits in the worker's queue for a slot. For a
   * job whose handler checks first that its work is still to do: from the commit on it counts as running, so
   * removeJob no longer drops it. PostgreSQL: no effect (graphile-worker is told by NOTIFY at the commit).
   */
  startAtCommit?: boolean
}


export const DEFAULT_MAX_ATTEMPTS = 25

/** Where a database's jobs go: its in-process worker (SQLite) or graphile-worker's schema (PostgreSQL). */
export type JobsRuntime = { kind: 'sqlite'; worker: SqliteJobWorker } | { kind: 'postgres'; schema: string }

// The runtime travels with the database (src/db/context.ts): any `db` or `trx` of it finds it.
function runtimeOf(db: Kysely<Database>): JobsRuntime {
  const runtime = dbContext(db).jobs
  if (!runtime) throw new Error('jobs are not set up for this database (createJobs was not called)')
  return runtime
}

export async function enqueueJob<K extends string>(db: Kysely<Database>, name: K, payload: PayloadOf<K>, options: EnqueueOptions = {}): Promise<void> {
  await enqueueJobs(db, [{ name, payload, options }])
}

/** A job for enqueueJobs. */
export interface JobSpec<K extends string = string> {
  name: K
  payload: PayloadOf<K>
  options?: EnqueueOptions
}

/** Several jobs added at once, as enqueueJob each (in order): one statement on PostgreSQL. */
export async function enqueueJobs(db: Kysely<Database>, jobs: JobSpec[]): Promise<void> {
  if (jobs.length === 0) return
  const runtime = runtimeOf(db)
  if (runtime.kind === 'postgres') {
    const calls = jobs.map(({ name, payload, options }) => addJobSql(db, name, payload, options) as RawBuilder<unknown>)
    // A select list is evaluated left to right: the jobs are added in the order given.
    await sql`select ${sql.join(calls)}`.execute(db)
    return
  }
  for (const { name, payload, options = {} } of jobs) {
    await runtime.worker.enqueue(db, name, payload, options.runAt ?? new Date(), options.jobKey ?? null, options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS, options.newKey ?? false, options.startAtCommit ?? false)
  }
}

export async function removeJob(db: Kysely<Database>, jobKey: string): Promise<void> {
  await removeJobs(db, [jobKey])
}

/** Drops the pending jobs with these keys (one statement on either database). */
export async function removeJobs(db: Kysely<Database>, jobKeys: string[]): Promise<void> {
  if (jobKeys.length === 0) return
  const runtime = runtimeOf(db)
  if (runtime.kind === 'postgres') {
    await sql`select ${sql.join(removeJobsSql(db, jobKeys)!)}`.execute(db)
    return
  }
  await runtime.worker.remove(db, jobKeys)
}

/**
 * PostgreSQL only: the remove_job calls that drop the pending jobs with these keys, one per key, as select-list
 * items of a statement that removes them as part of a larger one (once per row it selects). Undefined on SQLite.
 */
export function removeJobsSql(db: Kysely<Database>, jobKeys: ReadonlyArray<string | Expression<string>>) {
  const runtime = runtimeOf(db)
  if (runtime.kind !== 'postgres' || jobKeys.length === 0) return undefined
  return jobKeys.map((key) => sql`${sql.id(runtime.schema)}.remove_job(${key})`)
}

/** Whether a job with this key waits to run (not yet taken by a worker): one a job's own key may have been given to. */
export async function jobWaits(db: Kysely<Database>, jobKey: string): Promise<boolean> {
  const runtime = runtimeOf(db)
  if (runtime.kind === 'postgres') {
    const { rows } = await sql`select 1 from ${sql.id(runtime.schema, '_private_jobs')} where key = ${jobKey} and locked_at is null`.execute(db)
    return rows.length > 0
  }
  return (await db.selectFrom('jobs').select('id').where('job_key', '=', jobKey).where('locked_at', 'is', null).executeTakeFirst()) !== undefined
}

/** Whether jobs are added and removed by SQL calls a larger statement can hold (addJobCall, removeJobsSql): PostgreSQL. */
export function jobsInSql(db: Kysely<Database>): boolean {
  return runtimeOf(db).kind === 'postgres'
}

/** An add_job call's arguments: the job's name, its payload's JSON, run_at, job_key and max_attempts. */
export type AddJobArgs = [name: string, payload: string, runAt: string, jobKey: string | null, maxAttempts: number]

export function addJobArgs<K extends string>(name: K, payload: PayloadOf<K>, options: EnqueueOptions = {}): AddJobArgs {
  return [name, JSON.stringify(payload), (options.runAt ?? new Date()).toISOString(), options.jobKey ?? null, options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS]
}

/**
 * PostgreSQL only: the SQL of an add_job call with these arguments (values, or expressions standing for them in a
 * statement compiled once: db/prepared.ts), for a statement that adds a job as part of a larger one. Undefined on
 * SQLite.
 */
export function addJobCall(db: Kysely<Database>, args: AddJobArgs | ReadonlyArray<Expression<unknown>>): RawBuilder<unknown> | undefined {
  const runtime = runtimeOf(db)
  if (runtime.kind !== 'postgres') return undefined
  const [name, payload, runAt, jobKey, maxAttempts] = args
  return sql`${sql.id(runtime.schema)}.add_job(${name}, ${payload}::json, run_at => ${runAt}::timestamptz, job_key => ${jobKey}::text, max_attempts => ${maxAttempts}::int)`
}

/** PostgreSQL only: the SQL of an add_job call (addJobCall), from the job as enqueueJob takes it. Undefined on SQLite. */
export function addJobSql<K extends string>(db: Kysely<Database>, name: K, payload: PayloadOf<K>, options: EnqueueOptions = {}) {
  return addJobCall(db, addJobArgs(name, payload, options))
}

export interface JobsOptions {
  /** Jobs run at once by this process; 0: none (enqueueing still works). */
  concurrency: number
  /** PostgreSQL only: the connection string (graphile-worker keeps its own small pool). */
  databaseUrl: string
  /** PostgreSQL only: graphile-worker's schema (default graphile_worker; tests give each database its own). */
  schema?: string
  /** How often future jobs are looked for on PostgreSQL (new jobs arrive by LISTEN/NOTIFY at once). */
  pollIntervalMs?: number
  /** The handlers, by job name (src/task-list.ts, plus a test's own). */
  tasks: AnyTaskList
}

export interface Jobs {
  start(app: FastifyInstance): Promise<void>
  stop(): Promise<void>
  /** PostgreSQL: the id graphile-worker locks this instance's jobs with, once started (null: no workers). */
  workerPoolId(): string | null
}

function workerLogger(log: FastifyBaseLogger): WorkerLogger {
  return new WorkerLogger((scope) => (level, message, meta) => {
    const fields = { job: scope.taskIdentifier, jobId: scope.jobId, ...(meta ?? {}) }
    if (level === 'error') log.error(fields, message)
    else if (level === 'warning') log.warn(fields, message)
    else log.debug(fields, message)
  })
}

/**
 * A pool for graphile-worker that this module owns. Given only a connection string, graphile-worker makes its own
 * pool and, when stopped, removes the pool's error handlers and calls end() without waiting: a connection the
 * server ends meanwhile (a restart, a dropped database) was then an uncaught 'error' that crashed the process.
 * This one keeps its handlers (as src/db/connect.ts: pg discards such a client) and is ended, and awaited, here.
 */
function workerPool(connectionString: string, max: number): pg.Pool {
  const pool = new pg.Pool({ connectionString, max, application_name: 'tandem-jobs' })
  pool.on('error', () => {})
  pool.on('connect', (client) => client.on('error', () => {}))
  return pool
}

/** Sets up the job runtime of a database (before the first enqueue); `start` begins running jobs. */
export async function createJobs(database: Db, options: JobsOptions): Promise<Jobs> {
  const context = dbContext(database.db)
  if (database.dialect === 'sqlite') {
    const worker = new SqliteJobWorker(database.db, options.concurrency, options.tasks)
    context.jobs = { kind: 'sqlite', worker }
    return { start: (app) => worker.start(app), stop: () => worker.stop(), workerPoolId: () => null }
  }
  const schema = options.schema ?? 'graphile_worker'
  // Migrate even on an HTTP-only instance: add_job must exist for its transactions.
  // Instances starting at once on a fresh database race in graphile-worker's installation: the loser retries.
  for (let attempt = 1; ; attempt++) {
    try {
      const pool = workerPool(options.databaseUrl, 1)
      try {
        await runMigrations({ pgPool: pool, schema, logger: new WorkerLogger(() => () => {}) })
      } finally {
        await pool.end()
      }
      break
    } catch (error) {
      if (attempt >= 5) throw error
      await new Promise((resolve) => setTimeout(resolve, 200 * attempt))
    }
  }
  context.jobs = { kind: 'postgres', schema }
  let runner: Runner | undefined
  let pool: pg.Pool | undefined
  let workerPoolId: string | null = null
  return {
    workerPoolId: () => workerPoolId,
    async start(app) {
      if (options.concurrency === 0) return
      const taskList: TaskList = {}
      for (const [name, handler] of Object.entries(options.tasks)) {
        taskList[name] = async (payload, helpers) => {
          jobFault(name, 'start')
          await handler(payload as never, { app, attempt: helpers.job.attempts, jobKey: helpers.job.key, signal: helpers.abortSignal })
          jobFault(name, 'end')
        }
      }
      // The pool's id is what its jobs are locked with (src/failover/registry.ts frees a dead pool's jobs).
      const events: WorkerEvents = new EventEmitter()
      events.on('pool:create', ({ workerPool }) => (workerPoolId = workerPool.id))
      pool = workerPool(options.databaseUrl, Math.min(options.concurrency + 2, 12))
      runner = await run({
        pgPool: pool,
        schema,
        concurrency: options.concurrency,
        pollInterval: options.pollIntervalMs ?? 1000,
        noHandleSignals: true,
        events,
        taskList,
        logger: workerLogger(app.log),
        // Batching (graphile-worker's "performance" options): the pool takes up to concurrency + 1 due jobs in one
        // query and serves its workers from them, and the jobs that end in one tick are completed in one statement:
        // two statements a job fewer (docs/architecture-engine.md). A job taken into the queue is locked by this
        // pool, so a dead instance's are freed like its running ones (failover/registry.ts); a job completed but not
        // yet marked so when the process dies runs again, as a job that died running does (every handler looks at
        // the state first). The pool fetches even while every worker is busy: jobs no worker has taken within the
        // poll interval go back to the table for any instance (graphile-worker's default is 5 minutes), so a busy
        // instance never holds due jobs another could run for longer than that.
        preset: { worker: { localQueue: { size: options.concurrency + 1, ttl: options.pollIntervalMs ?? 1000 }, completeJobBatchDelay: 0 } },
      })
    },
    async stop() {
      const stopping = runner
      runner = undefined
      // graphile-worker stops its runner itself when another worker migrates the database (its LISTEN channels
      // are database-wide); stopping it again is then an error to ignore, not a failed shutdown.
      await stopping?.stop().catch((error: Error) => {
        if (!/already stopped/i.test(error.message)) throw error
      })
      const ending = pool
      pool = undefined
      await ending?.end()
    },
  }
}
