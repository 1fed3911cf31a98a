// The job queue of servers a test runs as child processes, read straight from their database (SQLite's jobs
// table; on PostgreSQL, graphile-worker's default schema, as on a database of their own): so a crash test waits
// until nothing more can run, instead of sleeping and counting what happened meanwhile. An app built in the test
// process has test/clock.ts's pendingJobs.
import SqliteDatabase from 'better-sqlite3'
import pg from 'pg'

export interface QueuedJob {
  name: string
  key: string | null
  runAt: Date
  /** When a worker took it; null while it waits. */
  lockedAt: Date | null
}

/**
 * The jobs of the task `name` whose payload (as JSON text) contains `payloadHas` that may still run: taken, or
 * waiting with attempts left (graphile-worker keeps a job it gave up on, e.g. one replaced while a dead worker
 * held it, with its attempts used up).
 */
export async function queuedJobs(url: string, name: string, payloadHas: string): Promise<QueuedJob[]> {
  const pattern = `%${payloadHas}%`
  if (url.startsWith('sqlite:')) {
    const file = new SqliteDatabase(url.slice('sqlite:'.length), { readonly: true })
    try {
      const rows = file.prepare('select name, job_key, run_at, locked_at from jobs where name = ? and payload like ? and (locked_at is not null or attempts < max_attempts)').all(name, pattern) as Array<{ name: string; job_key: string | null; run_at: string; locked_at: string | null }>
      return rows.map((r) => ({ name: r.name, key: r.job_key, runAt: new Date(r.run_at), lockedAt: r.locked_at === null ? null : new Date(r.locked_at) }))
    } finally {
      file.close()
    }
  }
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query<{ name: string; key: string | null; run_at: Date; locked_at: Date | null }>(
      `select t.identifier as name, j.key, j.run_at, j.locked_at from graphile_worker._private_jobs j
       join graphile_worker._private_tasks t on t.id = j.task_id
       where t.identifier = $1 and j.payload::text like $2 and (j.locked_at is not null or j.attempts < j.max_attempts)`,
      [name, pattern],
    )
    return rows.map((r) => ({ name: r.name, key: r.key, runAt: r.run_at, lockedAt: r.locked_at }))
  } finally {
    await client.end()
  }
}

/**
 * Whether nothing more of these jobs can run now: none is due and waiting, and none is held by a worker that took
 * it at or after `since` (a live server's, still running). A job taken before `since` belongs to a server killed
 * then, and runs again only once failover frees it; a job due later runs later.
 */
export async function queueSettled(url: string, name: string, payloadHas: string, since: Date): Promise<boolean> {
  const now = Date.now()
  return (await queuedJobs(url, name, payloadHas)).every((job) =>
    job.lockedAt === null ? job.runAt.getTime() > now : job.lockedAt.getTime() < since.getTime())
}
