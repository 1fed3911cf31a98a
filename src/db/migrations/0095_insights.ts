// Scorecard rollups (docs/insights.md): a row per phase run of an agent and a row per ended decision wait,
// written by the run engine in the transaction of the change that moves them (src/insights/rollup.ts), so the
// scorecards never read a run document. This migration creates them and fills them for the runs that exist.
// Frozen once landed.
import type { Kysely } from 'kysely'
import { rollupOfRun } from './0095_insights_rollup.js'

const FIGURES = [
  'gated', 'answered', 'approved', 'revised', 'rejected', 'expired', 'overridden', 'tool_auto', 'tool_approved', 'tool_denied', 'tool_failed',
  'questions', 'input_tokens', 'output_tokens', 'cost_usd', 'run_failed',
]

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('insight_phase_runs')
    .addColumn('phase_run_id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'text', (c) => c.notNull())
    .addColumn('run_id', 'text', (c) => c.notNull())
    .addColumn('stream_id', 'text', (c) => c.notNull())
    .addColumn('cycle_id', 'text', (c) => c.notNull())
    .addColumn('trigger_name', 'text', (c) => c.notNull())
    .addColumn('phase_id', 'text', (c) => c.notNull())
    .addColumn('phase_name', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('gated', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('answered', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('approved', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('revised', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('rejected', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('expired', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('overridden', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('tool_auto', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('tool_approved', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('tool_denied', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('tool_failed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('questions', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('input_tokens', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('output_tokens', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('cost_usd', 'double precision')
    .addColumn('run_failed', 'integer', (c) => c.notNull().defaultTo(0))
    .execute()
  await db.schema.createIndex('insight_phase_runs_agent').on('insight_phase_runs').columns(['workspace_id', 'agent_id', 'started_at']).execute()
  // Covering: a window's figures are summed from the index alone, read in order, without a look-up per row.
  await db.schema
    .createIndex('insight_phase_runs_window')
    .on('insight_phase_runs')
    .columns(['workspace_id', 'started_at', 'agent_id', 'stream_id', 'cycle_id', 'phase_id', ...FIGURES])
    .execute()
  await db.schema
    .createTable('insight_waits')
    .addColumn('phase_run_id', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'text', (c) => c.notNull())
    .addColumn('stream_id', 'text', (c) => c.notNull())
    .addColumn('cycle_id', 'text', (c) => c.notNull())
    .addColumn('phase_id', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('decision_ms', 'bigint')
    .addColumn('ended_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('insight_waits_pk', ['phase_run_id', 'seq'])
    .execute()
  await db.schema.createIndex('insight_waits_agent').on('insight_waits').columns(['workspace_id', 'agent_id', 'started_at']).execute()
  await db.schema.createIndex('insight_waits_window').on('insight_waits').columns(['workspace_id', 'started_at', 'agent_id', 'stream_id', 'cycle_id', 'phase_id', 'decision_ms']).execute()
  await backfillInsights(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function backfillInsights(db: Kysely<any>): Promise<void> {
  // The rollup's own pure function makes the rows (so the backfill and the engine count alike), a page of runs
  // at a time. A wait's start is not kept in a finished run: its answering task's close stands in for it.
  let after = ''
  for (;;) {
    const runs = await db.selectFrom('runs').select(['id', 'workspace_id', 'document']).where('id', '>', after).orderBy('id').limit(500).execute()
    if (runs.length === 0) break
    for (const row of runs) {
      const run = JSON.parse(row.document)
      const calls = await db.selectFrom('tool_calls').select(['phase_run_id', 'name', 'status', 'approval']).where('run_id', '=', row.id).execute()
      const tasks = await db.selectFrom('run_tasks').select(['phase_run_id', 'attempt', 'state', 'closed_at']).where('run_id', '=', row.id).execute()
      const { phases, waits } = rollupOfRun(row.workspace_id, run, calls, tasks)
      if (phases.length > 0) await db.insertInto('insight_phase_runs').values(phases).onConflict((oc) => oc.column('phase_run_id').doNothing()).execute()
      if (waits.length > 0) await db.insertInto('insight_waits').values(waits).onConflict((oc) => oc.columns(['phase_run_id', 'seq']).doNothing()).execute()
    }
    after = runs[runs.length - 1]!.id
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('insight_waits').execute()
  await db.schema.dropTable('insight_phase_runs').execute()
}
