// The span a run's invoke_workflow links to, as a W3C traceparent: for a run a message trigger started from
// another run's message, that run's invoke_workflow (src/tracing/triggered.ts). Written only when traces are on
// and the cause is known; null otherwise. Frozen once landed.
import type { Kysely } from 'kysely'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('runs').addColumn('trace_link', 'text').execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('runs').dropColumn('trace_link').execute()
}
