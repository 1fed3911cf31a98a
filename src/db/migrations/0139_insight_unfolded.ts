// Phase runs whose scorecard row changed since it was last added to the summed rollups (docs/insights.md, "How the
// figures are kept"): the run engine notes one here in the transaction that rewrites the row, with what the row
// held before (`old`, as JSON; null for a new phase run) and the last of its wait rows then (`old_wait_seq`); a
// fold adds the difference to the summed rows and removes the note. A reader of the summed rows adds the notes'
// differences to them. Frozen once landed.
import type { Kysely } from 'kysely'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('insight_unfolded')
    .addColumn('phase_run_id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'text', (c) => c.notNull())
    .addColumn('stream_id', 'text', (c) => c.notNull())
    .addColumn('cycle_id', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('old', 'text')
    .addColumn('old_wait_seq', 'integer', (c) => c.notNull().defaultTo(-1))
    .execute()
  await db.schema.createIndex('insight_unfolded_agent').on('insight_unfolded').columns(['workspace_id', 'agent_id', 'started_at']).execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('insight_unfolded').execute()
}
