// SQLite's job queue (src/jobs/sqlite.ts): the due jobs not yet claimed, in the order a claim takes them (run_at,
// then id). The claim read every due row and sorted them; with this index it reads as many entries as it claims.
// On PostgreSQL graphile-worker runs the jobs and the table stays empty. Frozen once landed.
import { sql, type Kysely } from 'kysely'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('jobs_due').on('jobs').columns(['run_at', 'id']).where(sql.ref('locked_at'), 'is', null).execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('jobs_due').execute()
}
