// Scorecard day rollups (docs/insights.md): one row per workspace, agent and UTC day of the phase runs' start —
// the sums of that day's per-phase-run rollup rows, and the decision times of its ended waits — kept by the run
// engine in the same transactions as those rows, so a scorecard over whole days reads a row per agent and day
// instead of every phase run. This migration creates the table and fills it from the per-phase-run rows (SQL
// only: no feature code). Frozen once landed.
import { sql, type Kysely } from 'kysely'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  let table = db.schema
    .createTable('insight_agent_days')
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
  for (const column of ['phase_runs', 'answered', 'approved', 'revised', 'rejected', 'expired', 'overridden', 'first_pass', 'revisions_approved', 'tool_auto', 'tool_approved', 'tool_denied', 'tool_failed', 'questions', 'priced', 'gated_priced', 'run_failed']) {
    table = table.addColumn(column, 'integer', (c) => c.notNull().defaultTo(0))
  }
  table = table
    .addColumn('input_tokens', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('output_tokens', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('cost', 'double precision', (c) => c.notNull().defaultTo(0))
    .addColumn('gated_cost', 'double precision', (c) => c.notNull().defaultTo(0))
    // The decision times (ms) of the day's waits a person ended, each followed by a comma.
    .addColumn('decision_samples', 'text', (c) => c.notNull().defaultTo(''))
    .addPrimaryKeyConstraint('insight_agent_days_pk', ['workspace_id', 'agent_id', 'day'])
  await table.execute()
  await backfillAgentDays(db)
}

/** The day rows of every per-phase-run and wait rollup row that exists (replacing any day rows). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function backfillAgentDays(db: Kysely<any>): Promise<void> {
  const postgres = await isPostgres(db)
  const concat = postgres ? sql`string_agg(decision_ms::text || ',', '' order by phase_run_id, seq)` : sql`group_concat(decision_ms || ',', '')`
  // No transaction of its own: the migrator's holds it (a caller outside one may wrap it).
  await db.deleteFrom('insight_agent_days').execute()
  await sql`insert into insight_agent_days (workspace_id, agent_id, day, phase_runs, answered, approved, revised, rejected, expired, overridden,
      first_pass, revisions_approved, tool_auto, tool_approved, tool_denied, tool_failed, questions, priced, gated_priced, run_failed,
      input_tokens, output_tokens, cost, gated_cost)
    select workspace_id, agent_id, substr(started_at, 1, 10), count(*), sum(answered), sum(approved), sum(revised), sum(rejected), sum(expired), sum(overridden),
      sum(case when approved > 0 and revised = 0 then 1 else 0 end), sum(case when approved > 0 then revised else 0 end),
      sum(tool_auto), sum(tool_approved), sum(tool_denied), sum(tool_failed), sum(questions),
      count(cost_usd), count(case when gated = 1 then cost_usd end), sum(run_failed),
      sum(input_tokens), sum(output_tokens), coalesce(sum(cost_usd), 0), coalesce(sum(case when gated = 1 then cost_usd end), 0)
    from insight_phase_runs group by workspace_id, agent_id, substr(started_at, 1, 10)`.execute(db)
  const samples = await sql<{ workspace_id: string; agent_id: string; day: string; samples: string }>`select workspace_id, agent_id, substr(started_at, 1, 10) as day, ${concat} as samples
    from insight_waits where decision_ms is not null group by workspace_id, agent_id, substr(started_at, 1, 10)`.execute(db)
  for (const row of samples.rows) {
    await db.updateTable('insight_agent_days').set({ decision_samples: row.samples }).where('workspace_id', '=', row.workspace_id).where('agent_id', '=', row.agent_id).where('day', '=', row.day).execute()
  }
}

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
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('insight_agent_days').execute()
}
