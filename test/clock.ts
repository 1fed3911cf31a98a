// The clock in tests: instead of waiting for a timer's job to fall due, a test takes the pending jobs whose key
// matches, in the order they are due, and runs each through the app's own task list (src/task-list.ts) as a
// runner would when its time came: the job leaves the queue, then its handler runs. Both databases: SQLite's
// jobs table, graphile-worker's on PostgreSQL.
import { sql } from 'kysely'
import type { FastifyInstance } from 'fastify'
import { taskList } from '../src/task-list.js'
import { removeJob } from '../src/jobs/index.js'

export interface PendingJob {
  name: string
  key: string
  payload: unknown
  runAt: string
}

/** The pending jobs whose key contains `text`, soonest due first. */
export async function pendingJobs(app: FastifyInstance, text: string): Promise<PendingJob[]> {
  const db = app.database.db
  if (app.database.dialect === 'sqlite') {
    const rows = await db.selectFrom('jobs').select(['name', 'job_key', 'payload', 'run_at']).where('job_key', 'like', `%${text}%`).orderBy('run_at').orderBy('id').execute()
    return rows.map((r) => ({ name: r.name, key: r.job_key as string, payload: JSON.parse(r.payload), runAt: new Date(r.run_at).toISOString() }))
  }
  const schema = app.database.schema ? `${app.database.schema}_jobs` : 'graphile_worker'
  const { rows } = await sql<{ name: string; key: string; payload: unknown; run_at: Date }>`
    select t.identifier as name, j.key, j.payload, j.run_at from ${sql.id(schema, '_private_jobs')} j
    join ${sql.id(schema, '_private_tasks')} t on t.id = j.task_id
    where j.key like ${`%${text}%`} order by j.run_at, j.id`.execute(db)
  return rows.map((r) => ({ name: r.name, key: r.key, payload: r.payload, runAt: new Date(r.run_at).toISOString() }))
}

/** How many jobs are pending whose key contains `text`. */
export async function pendingCount(app: FastifyInstance, text: string): Promise<number> {
  return (await pendingJobs(app, text)).length
}

/**
 * Moves the clock `ms` ahead for the pending jobs whose key contains `text` (every one of them when `ms` is left
 * out): each that falls due by then, soonest first, leaves the queue and runs through the task list's handler.
 * Returns the jobs run.
 */
export async function advanceClock(app: FastifyInstance, text: string, ms = Infinity): Promise<PendingJob[]> {
  const until = Date.now() + ms
  const jobs = (await pendingJobs(app, text)).filter((job) => Date.parse(job.runAt) <= until)
  for (const job of jobs) {
    await removeJob(app.database.db, job.key)
    const handler = (taskList as unknown as Record<string, (payload: unknown, context: unknown) => Promise<void>>)[job.name]
    if (!handler) throw new Error(`no handler in the task list for the job ${job.name}`)
    await handler(job.payload, { app, attempt: 1, jobKey: job.key, signal: new AbortController().signal })
  }
  return jobs
}
