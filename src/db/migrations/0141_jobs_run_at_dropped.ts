// SQLite's job queue (src/jobs/sqlite.ts) reads `run_at` only among the jobs not yet taken (`locked_at is null`),
// which jobs_due (0140) holds in that order: the older index on `run_at` alone had no reader left, and cost every
// job a second entry to write and delete. Frozen once landed.
import type { Kysely } from 'kysely'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('jobs_run_at').execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('jobs_run_at').on('jobs').column('run_at').execute()
}
