// The durable job queue of SQLite deployments (PostgreSQL uses graphile-worker's own schema). Frozen once landed.
import type { Kysely } from 'kysely'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('run_at', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('max_attempts', 'integer', (c) => c.notNull())
    .addColumn('job_key', 'text', (c) => c.unique())
    .addColumn('locked_at', 'text')
    .addColumn('last_error', 'text')
    .execute()
  await db.schema.createIndex('jobs_run_at').on('jobs').columns(['run_at']).execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('jobs').execute()
}
