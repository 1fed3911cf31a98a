// Scorecard rollups by hour and by stream or cycle (docs/insights.md, "How the figures are kept"): the sums of the
// per-phase-run rollup rows, and the decision times of their waits, per workspace, agent and UTC hour of the phase
// runs' start (`insight_agent_hours`, for the hourly series) and per workspace, stream or cycle, UTC day and agent
// (`insight_scope_days`, for the lists and daily series filtered by one of them). The run engine keeps them with
// the day rollups, in the same transactions. Also indexes the per-phase-run and wait rows by agent with every
// column a scorecard sums, so one agent's detail reads its rows from the index alone. Fills the new tables from the
// per-phase-run and wait rows in SQL (no feature code). Frozen once landed.
import { sql, type Kysely } from 'kysely'

const COUNTS = [
  'phase_runs', 'answered', 'approved', 'revised', 'rejected', 'expired', 'overridden', 'first_pass', 'revisions_approved', 'tool_auto', 'tool_approved',
  'tool_denied', 'tool_failed', 'questions', 'priced', 'gated_priced', 'run_failed',
]
const FIGURES = [
  'gated', 'answered', 'approved', 'revised', 'rejected', 'expired', 'overridden', 'tool_auto', 'tool_approved', 'tool_denied', 'tool_failed',
  'questions', 'input_tokens', 'output_tokens', 'cost_usd', 'run_failed',
]

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function createSums(db: Kysely<any>, name: string, keys: string[]): Promise<void> {
  let table = db.schema.createTable(name)
  for (const key of keys) table = table.addColumn(key, 'text', (c) => c.notNull())
  for (const column of COUNTS) table = table.addColumn(column, 'integer', (c) => c.notNull().defaultTo(0))
  await table
    .addColumn('input_tokens', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('output_tokens', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('cost', 'double precision', (c) => c.notNull().defaultTo(0))
    .addColumn('gated_cost', 'double precision', (c) => c.notNull().defaultTo(0))
    // The decision times (ms) of the waits a person ended, each followed by a comma.
    .addColumn('decision_samples', 'text', (c) => c.notNull().defaultTo(''))
    .addPrimaryKeyConstraint(`${name}_pk`, keys as never)
    .execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await createSums(db, 'insight_agent_hours', ['workspace_id', 'agent_id', 'hour'])
  // `scope` is `stream:<id>` or `cycle:<id>`: a phase run counts in one row of each.
  await createSums(db, 'insight_scope_days', ['workspace_id', 'scope', 'day', 'agent_id'])
  // One agent's rows in a window, covering (the breakdown's names too); replaces the narrower (workspace, agent, started_at) indexes.
  await db.schema
    .createIndex('insight_phase_runs_agent_window')
    .on('insight_phase_runs')
    .columns(['workspace_id', 'agent_id', 'started_at', 'stream_id', 'cycle_id', 'phase_id', ...FIGURES, 'trigger_name', 'phase_name'])
    .execute()
  await db.schema.dropIndex('insight_phase_runs_agent').execute()
  await db.schema.createIndex('insight_waits_agent_window').on('insight_waits').columns(['workspace_id', 'agent_id', 'started_at', 'stream_id', 'cycle_id', 'phase_id', 'decision_ms']).execute()
  await db.schema.dropIndex('insight_waits_agent').execute()
  await backfillRollupDimensions(db)
}

/** The hour and scope rows of every per-phase-run and wait rollup row that exists (replacing any). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function backfillRollupDimensions(db: Kysely<any>): Promise<void> {
  const postgres = await isPostgres(db)
  const concat = postgres ? sql`string_agg(decision_ms::text || ',', '')` : sql`group_concat(decision_ms || ',', '')`
  // No transaction of its own: the migrator's holds it (a caller outside one may wrap it).
  await db.deleteFrom('insight_agent_hours').execute()
  await db.deleteFrom('insight_scope_days').execute()
  const fill = async (table: string, keys: Array<[string, ReturnType<typeof sql>]>) => {
    const names = sql.join(keys.map(([name]) => sql.ref(name)))
    const picked = sql.join(keys.map(([name, expression]) => sql`${expression} as ${sql.ref(name)}`))
    const on = sql.join(keys.map(([name]) => sql`w.${sql.ref(name)} = p.${sql.ref(name)}`), sql` and `)
    await sql`insert into ${sql.table(table)} (${names}, phase_runs, answered, approved, revised, rejected, expired, overridden,
        first_pass, revisions_approved, tool_auto, tool_approved, tool_denied, tool_failed, questions, priced, gated_priced, run_failed,
        input_tokens, output_tokens, cost, gated_cost, decision_samples)
      select p.*, coalesce(w.samples, '') from (
        select ${picked}, count(*) as phase_runs, sum(answered) as answered, sum(approved) as approved, sum(revised) as revised, sum(rejected) as rejected,
          sum(expired) as expired, sum(overridden) as overridden, sum(case when approved > 0 and revised = 0 then 1 else 0 end) as first_pass,
          sum(case when approved > 0 then revised else 0 end) as revisions_approved, sum(tool_auto) as tool_auto, sum(tool_approved) as tool_approved,
          sum(tool_denied) as tool_denied, sum(tool_failed) as tool_failed, sum(questions) as questions, count(cost_usd) as priced,
          count(case when gated = 1 then cost_usd end) as gated_priced, sum(run_failed) as run_failed, sum(input_tokens) as input_tokens,
          sum(output_tokens) as output_tokens, coalesce(sum(cost_usd), 0) as cost, coalesce(sum(case when gated = 1 then cost_usd end), 0) as gated_cost
        from insight_phase_runs group by ${sql.join(keys.map(([, expression]) => expression))}
      ) p left join (
        select ${picked}, ${concat} as samples from insight_waits where decision_ms is not null group by ${sql.join(keys.map(([, expression]) => expression))}
      ) w on ${on}`.execute(db)
  }
  const day = sql`substr(started_at, 1, 10)`
  await fill('insight_agent_hours', [['workspace_id', sql`workspace_id`], ['agent_id', sql`agent_id`], ['hour', sql`substr(started_at, 1, 13)`]])
  await fill('insight_scope_days', [['workspace_id', sql`workspace_id`], ['scope', sql`'stream:' || stream_id`], ['day', day], ['agent_id', sql`agent_id`]])
  await fill('insight_scope_days', [['workspace_id', sql`workspace_id`], ['scope', sql`'cycle:' || cycle_id`], ['day', day], ['agent_id', sql`agent_id`]])
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
  await db.schema.createIndex('insight_waits_agent').on('insight_waits').columns(['workspace_id', 'agent_id', 'started_at']).execute()
  await db.schema.dropIndex('insight_waits_agent_window').execute()
  await db.schema.createIndex('insight_phase_runs_agent').on('insight_phase_runs').columns(['workspace_id', 'agent_id', 'started_at']).execute()
  await db.schema.dropIndex('insight_phase_runs_agent_window').execute()
  await db.schema.dropTable('insight_scope_days').execute()
  await db.schema.dropTable('insight_agent_hours').execute()
}
