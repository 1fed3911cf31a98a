// Phase runs whose scorecard row changed since it was last added to the summed rollups (docs/insights.md, "How the
// figures are kept"): the run engine notes one here in the transaction that rewrites the row, with what the row
// held before (`old`: its figures joined by commas; null for a new phase run) and the last of its wait rows then (`old_wait_seq`); a
// fold adds the difference to the summed rows and removes the note. A reader of the summed rows adds the notes'
// differences to them. The per-phase-run rows' indexes become their keys alone (workspace and start; workspace,
// agent and start): the runs rewrite a row's figures as its phase moves, which then changes no index entry (on
// PostgreSQL, with room left in each page, an update in place); the reads of a window's partial periods and of one
// agent's rows look their figures up in the table. Frozen once landed.
import { sql, type Kysely } from 'kysely'

const FIGURES = [
  'gated', 'answered', 'approved', 'revised', 'rejected', 'expired', 'overridden', 'tool_auto', 'tool_approved', 'tool_denied', 'tool_failed',
  'questions', 'input_tokens', 'output_tokens', 'cost_usd', 'run_failed',
]

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function isPostgres(db: Kysely<any>): Promise<boolean> {
  try {
    await sql`select version()`.execute(db)
    return true
  } catch {
    return false
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = await isPostgres(db)
  let notes = db.schema
    .createTable('insight_unfolded')
    .addColumn('phase_run_id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'text', (c) => c.notNull())
    .addColumn('stream_id', 'text', (c) => c.notNull())
    .addColumn('cycle_id', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('old', 'text')
    .addColumn('old_wait_seq', 'integer', (c) => c.notNull().defaultTo(-1))
  // SQLite: kept in its key's order (no rowid, so no second tree for the key).
  if (!postgres) notes = notes.modifyEnd(sql`without rowid`)
  await notes.execute()
  await db.schema.createIndex('insight_unfolded_agent').on('insight_unfolded').columns(['workspace_id', 'agent_id', 'started_at']).execute()
  await db.schema.dropIndex('insight_phase_runs_window').execute()
  await db.schema.dropIndex('insight_phase_runs_agent_window').execute()
  await db.schema.createIndex('insight_phase_runs_window').on('insight_phase_runs').columns(['workspace_id', 'started_at']).execute()
  await db.schema.createIndex('insight_phase_runs_agent_window').on('insight_phase_runs').columns(['workspace_id', 'agent_id', 'started_at']).execute()
  if (postgres) await sql`alter table insight_phase_runs set (fillfactor = 80)`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('insight_unfolded').execute()
  await db.schema.dropIndex('insight_phase_runs_window').execute()
  await db.schema.dropIndex('insight_phase_runs_agent_window').execute()
  await db.schema.createIndex('insight_phase_runs_window').on('insight_phase_runs').columns(['workspace_id', 'started_at', 'agent_id', 'stream_id', 'cycle_id', 'phase_id', ...FIGURES]).execute()
  await db.schema
    .createIndex('insight_phase_runs_agent_window')
    .on('insight_phase_runs')
    .columns(['workspace_id', 'agent_id', 'started_at', 'stream_id', 'cycle_id', 'phase_id', ...FIGURES, 'trigger_name', 'phase_name'])
    .execute()
}
