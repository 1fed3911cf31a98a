// W3C trace context carried with the work a request creates (issue 15): a run keeps the context of the request
// that started it, and each task and webhook delivery its own span of that trace, so that every call made later
// (by any instance, after any restart) continues the same trace. Nullable: work from before has none.
// Frozen once landed.
import type { Kysely } from 'kysely'

const TABLES = ['runs', 'run_tasks', 'webhook_deliveries']

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // One statement per table: SQLite adds one column per ALTER TABLE.
  for (const table of TABLES) await db.schema.alterTable(table).addColumn('traceparent', 'text').execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of TABLES) await db.schema.alterTable(table).dropColumn('traceparent').execute()
}
