// The summed rollups (docs/insights.md): the sums of the per-phase-run rows and the decision times of the ended
// waits per workspace, agent and UTC day of the phase runs' start; per agent and UTC hour; and per stream or
// cycle, UTC day and agent. The engine keeps them by deltas in the same transaction as the rows they sum: a phase
// run's new row minus its old one, added to its rows (an upsert that adds, so concurrent runs of one agent never
// lose each other's counts), and each ended wait's time appended.
import { sql, type Expression, type Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { prepared } from '../db/prepared.js'
import type { InsightAgentDayTable, InsightPhaseRunTable } from './insights.table.js'

type Summed = Exclude<keyof InsightAgentDayTable, 'workspace_id' | 'agent_id' | 'day' | 'decision_samples'>
export type DayDelta = Record<Summed, number>

const SUMMED: Summed[] = [
  'phase_runs', 'answered', 'approved', 'revised', 'rejected', 'expired', 'overridden', 'first_pass', 'revisions_approved',
  'tool_auto', 'tool_approved', 'tool_denied', 'tool_failed', 'questions', 'priced', 'gated_priced', 'run_failed',
  'input_tokens', 'output_tokens', 'cost', 'gated_cost',
]

/** What one per-phase-run row adds to its day (the same sums the scorecards take over those rows). */
export function dayContribution(row: InsightPhaseRunTable): DayDelta {
  const approved = Number(row.approved)
  const revised = Number(row.revised)
  const gated = Number(row.gated) === 1
  const cost = row.cost_usd === null ? null : Number(row.cost_usd)
  return {
    phase_runs: 1,
    answered: Number(row.answered),
    approved,
    revised,
    rejected: Number(row.rejected),
    expired: Number(row.expired),
    overridden: Number(row.overridden),
    first_pass: approved > 0 && revised === 0 ? 1 : 0,
    revisions_approved: approved > 0 ? revised : 0,
    tool_auto: Number(row.tool_auto),
    tool_approved: Number(row.tool_approved),
    tool_denied: Number(row.tool_denied),
    tool_failed: Number(row.tool_failed),
    questions: Number(row.questions),
    priced: cost === null ? 0 : 1,
    gated_priced: gated && cost !== null ? 1 : 0,
    run_failed: Number(row.run_failed),
    input_tokens: Number(row.input_tokens),
    output_tokens: Number(row.output_tokens),
    cost: cost ?? 0,
    gated_cost: gated ? (cost ?? 0) : 0,
  }
}

/** A rollup the engine keeps by deltas, and the rows of it a per-phase-run row counts in (by their keys). */
interface Rollup {
  table: 'insight_agent_days' | 'insight_agent_hours' | 'insight_scope_days'
  keys: string[]
  /** How many rows of it one per-phase-run row counts in (the length of rowsOf's answer). */
  width: number
  rowsOf(row: RollupKey): Array<Record<string, string>>
}

/** What places a per-phase-run or wait row in the rollups. */
type RollupKey = Pick<InsightPhaseRunTable, 'workspace_id' | 'agent_id' | 'started_at' | 'stream_id' | 'cycle_id'>

const ROLLUPS: Rollup[] = [
  { table: 'insight_agent_days', keys: ['workspace_id', 'agent_id', 'day'], width: 1, rowsOf: (r) => [{ workspace_id: r.workspace_id, agent_id: r.agent_id, day: r.started_at.slice(0, 10) }] },
  { table: 'insight_agent_hours', keys: ['workspace_id', 'agent_id', 'hour'], width: 1, rowsOf: (r) => [{ workspace_id: r.workspace_id, agent_id: r.agent_id, hour: r.started_at.slice(0, 13) }] },
  {
    table: 'insight_scope_days',
    keys: ['workspace_id', 'scope', 'day', 'agent_id'],
    width: 2,
    rowsOf: (r) => ['stream:' + r.stream_id, 'cycle:' + r.cycle_id].map((scope) => ({ workspace_id: r.workspace_id, scope, day: r.started_at.slice(0, 10), agent_id: r.agent_id })),
  },
]

const negate = (delta: DayDelta) => Object.fromEntries(SUMMED.map((c) => [c, -delta[c]])) as DayDelta
const ZERO = Object.fromEntries(SUMMED.map((c) => [c, 0])) as DayDelta

/** Moves a phase run's contribution from its old row (none when new) to its new one, in every rollup. */
export async function phaseRowMoved(db: Kysely<Database>, old: InsightPhaseRunTable | undefined, row: InsightPhaseRunTable): Promise<void> {
  const now = dayContribution(row)
  const was = old && dayContribution(old)
  const delta = was && (Object.fromEntries(SUMMED.map((c) => [c, now[c] - was[c]])) as DayDelta)
  for (const rollup of ROLLUPS) {
    const rows = rollup.rowsOf(row)
    if (!old || !was || !delta) {
      await addTo(db, rollup, rows, now, '')
      continue
    }
    const oldRows = rollup.rowsOf(old)
    if (JSON.stringify(oldRows) !== JSON.stringify(rows)) {
      await addTo(db, rollup, oldRows, negate(was), '')
      await addTo(db, rollup, rows, now, '')
    } else if (SUMMED.some((c) => delta[c] !== 0)) {
      await addTo(db, rollup, rows, delta, '')
    }
  }
}

/** A decision time (ms) of a wait of the phase run the key places (its agent, start, stream and cycle). */
export async function decisionTimeAdded(db: Kysely<Database>, key: RollupKey, ms: number): Promise<void> {
  for (const rollup of ROLLUPS) await addTo(db, rollup, rollup.rowsOf(key), ZERO, `${ms},`)
}

/**
 * The upsert that adds a delta to a rollup's rows, compiled once per rollup (db/prepared.ts): it runs for every
 * phase a change moves, and building and compiling it each time cost more than running it. Its parameters: each
 * row's keys (in `keys` order), then the summed columns (in SUMMED order), then the decision samples to append.
 */
function adder(rollup: Rollup) {
  const keyCount = rollup.width * rollup.keys.length
  return prepared<unknown[], unknown>(keyCount + SUMMED.length + 1, (db, ...args: Array<Expression<unknown>>) => {
    const summed = Object.fromEntries(SUMMED.map((c, i) => [c, args[keyCount + i]]))
    const rows = Array.from({ length: rollup.width }, (_, row) => ({
      ...Object.fromEntries(rollup.keys.map((key, k) => [key, args[row * rollup.keys.length + k]])),
      ...summed,
      decision_samples: args[keyCount + SUMMED.length],
    }))
    const column = (c: string) => sql`${sql.ref(`${rollup.table}.${c}`)}`
    return db
      .insertInto(rollup.table)
      .values(rows as never)
      .onConflict((oc) =>
        oc.columns(rollup.keys as never).doUpdateSet({
          ...(Object.fromEntries(SUMMED.map((c) => [c, sql`${column(c)} + excluded.${sql.ref(c)}`])) as Record<Summed, never>),
          decision_samples: sql`${column('decision_samples')} || excluded.decision_samples`,
        } as never),
      )
  })
}

const ADDERS = new Map(ROLLUPS.map((rollup) => [rollup, adder(rollup)]))

async function addTo(db: Kysely<Database>, rollup: Rollup, rows: Array<Record<string, string>>, delta: DayDelta, samples: string): Promise<void> {
  if (rows.length !== rollup.width) throw new Error(`${rollup.table}: ${rows.length} rows where its width is ${rollup.width}`)
  await ADDERS.get(rollup)!(db, ...rows.flatMap((row) => rollup.keys.map((key) => row[key])), ...SUMMED.map((c) => delta[c]), samples)
}
