// The summed rollups (docs/insights.md): the sums of the per-phase-run rows and the decision times of the ended
// waits per workspace, agent and UTC day of the phase runs' start; per agent and UTC hour; and per stream or
// cycle, UTC day and agent. The fold (fold.ts) keeps them by deltas from the engine's notes: a phase run's row
// minus the row it had when noted, added to its rows (an upsert that adds, so two folds never lose each other's
// counts), and each wait ended since appended.
import { sql, type Expression, type Kysely, type QueryCreator } from 'kysely'
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

/** The columns of a per-phase-run row that the rollups sum (the rest are its keys, fixed once written). */
export const FIGURE_COLUMNS = [
  'gated', 'answered', 'approved', 'revised', 'rejected', 'expired', 'overridden', 'tool_auto', 'tool_approved', 'tool_denied', 'tool_failed', 'questions',
  'input_tokens', 'output_tokens', 'cost_usd', 'run_failed',
] as const satisfies ReadonlyArray<keyof InsightPhaseRunTable>
export type RowFigures = Pick<InsightPhaseRunTable, (typeof FIGURE_COLUMNS)[number]>

/**
 * A row's figures as a note keeps them (insight_unfolded.old): their values in FIGURE_COLUMNS' order, joined by
 * commas, a null cost empty. A tenth of the JSON of the row, which on SQLite made a note cost twice as much.
 */
export function figuresText(row: Record<(typeof FIGURE_COLUMNS)[number], unknown>): string {
  return FIGURE_COLUMNS.map((c) => (row[c] === null || row[c] === undefined ? '' : String(row[c]))).join(',')
}

/** The figures of figuresText's answer. */
export function parseFigures(text: string): RowFigures {
  const values = text.split(',')
  const row = Object.fromEntries(FIGURE_COLUMNS.map((c, i) => [c, values[i] === '' ? null : Number(values[i])]))
  return row as unknown as RowFigures
}

/** What one per-phase-run row adds to its day, in SUMMED's order (the same sums the scorecards take over those rows). */
function contributionOf(row: RowFigures): number[] {
  const approved = Number(row.approved)
  const revised = Number(row.revised)
  const gated = Number(row.gated) === 1
  const cost = row.cost_usd === null ? null : Number(row.cost_usd)
  // The order of SUMMED.
  return [
    1, Number(row.answered), approved, revised, Number(row.rejected), Number(row.expired), Number(row.overridden),
    approved > 0 && revised === 0 ? 1 : 0, approved > 0 ? revised : 0,
    Number(row.tool_auto), Number(row.tool_approved), Number(row.tool_denied), Number(row.tool_failed), Number(row.questions),
    cost === null ? 0 : 1, gated && cost !== null ? 1 : 0, Number(row.run_failed),
    Number(row.input_tokens), Number(row.output_tokens), cost ?? 0, gated ? (cost ?? 0) : 0,
  ]
}

/** What one per-phase-run row adds to its day (the same sums the scorecards take over those rows). */
export function dayContribution(row: RowFigures): DayDelta {
  const values = contributionOf(row)
  return Object.fromEntries(SUMMED.map((c, i) => [c, values[i]])) as DayDelta
}

/** A rollup the engine keeps by deltas, and the rows of it a per-phase-run row counts in (by their keys). */
export interface Rollup {
  table: 'insight_agent_days' | 'insight_agent_hours' | 'insight_scope_days'
  keys: string[]
  /** How many rows of it one per-phase-run row counts in (the length of rowsOf's answer). */
  width: number
  rowsOf(row: RollupKey): Array<Record<string, string>>
  /** The rows rowsOf places it in as one string: the table, then each row's keys in order (the order folds lock rows in). */
  keyOf(row: RollupKey): string
}

/** What places a per-phase-run or wait row in the rollups. */
type RollupKey = Pick<InsightPhaseRunTable, 'workspace_id' | 'agent_id' | 'started_at' | 'stream_id' | 'cycle_id'>

const ROLLUPS: Rollup[] = [
  {
    table: 'insight_agent_days', keys: ['workspace_id', 'agent_id', 'day'], width: 1,
    rowsOf: (r) => [{ workspace_id: r.workspace_id, agent_id: r.agent_id, day: r.started_at.slice(0, 10) }],
    keyOf: (r) => `insight_agent_days\u0000${r.workspace_id}\u0000${r.agent_id}\u0000${r.started_at.slice(0, 10)}`,
  },
  {
    table: 'insight_agent_hours', keys: ['workspace_id', 'agent_id', 'hour'], width: 1,
    rowsOf: (r) => [{ workspace_id: r.workspace_id, agent_id: r.agent_id, hour: r.started_at.slice(0, 13) }],
    keyOf: (r) => `insight_agent_hours\u0000${r.workspace_id}\u0000${r.agent_id}\u0000${r.started_at.slice(0, 13)}`,
  },
  {
    table: 'insight_scope_days',
    keys: ['workspace_id', 'scope', 'day', 'agent_id'],
    width: 2,
    rowsOf: (r) => ['stream:' + r.stream_id, 'cycle:' + r.cycle_id].map((scope) => ({ workspace_id: r.workspace_id, scope, day: r.started_at.slice(0, 10), agent_id: r.agent_id })),
    keyOf: (r) => `insight_scope_days\u0000${r.workspace_id}\u0000stream:${r.stream_id}\u0000${r.started_at.slice(0, 10)}\u0000${r.agent_id}\u0001${r.workspace_id}\u0000cycle:${r.cycle_id}\u0000${r.started_at.slice(0, 10)}\u0000${r.agent_id}`,
  },
]

/** One upsert that adds `delta` (in SUMMED's order) and appends `samples` to `rows` of a rollup. */
export interface Add {
  rollup: Rollup
  rows: Array<Record<string, string>>
  delta: number[]
  samples: string
}

/**
 * A fold's adds, merged per rollup row as they come (their deltas summed, their samples joined): a phase run's
 * change is its row now added and its row as noted taken away, which in the same rows sum to the difference.
 */
export class RollupAdds {
  private readonly merged = new Map<string, Add>()

  private into(rollup: Rollup, key: RollupKey): Add {
    const id = rollup.keyOf(key)
    let add = this.merged.get(id)
    if (!add) {
      add = { rollup, rows: rollup.rowsOf(key), delta: new Array<number>(SUMMED.length).fill(0), samples: '' }
      this.merged.set(id, add)
    }
    return add
  }

  /** Adds (`sign` 1) or takes away (-1) what a per-phase-run row with these keys and figures counts, in every rollup. */
  count(key: RollupKey, figures: RowFigures, sign: 1 | -1): void {
    const values = contributionOf(figures)
    for (const rollup of ROLLUPS) {
      const { delta } = this.into(rollup, key)
      for (let i = 0; i < values.length; i++) delta[i]! += sign * values[i]!
    }
  }

  /** Appends a decision time (ms) of a wait of the phase run the key places, in every rollup. */
  sample(key: RollupKey, ms: number): void {
    for (const rollup of ROLLUPS) this.into(rollup, key).samples += `${ms},`
  }

  /** The adds in one order (by table and keys: folds that add to the same rows lock them in that order), those that change nothing left out. */
  list(): Add[] {
    return [...this.merged.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, add]) => add)
      .filter((add) => add.samples !== '' || add.delta.some((value) => value !== 0))
  }
}

/** Adds an add's delta (and appends its samples) to its rows. */
export async function applyAdd(db: Kysely<Database>, add: Add): Promise<void> {
  await ADDERS.get(add.rollup)!(db, ...addParameters(add))
}

/** The parameters of an add, in the order addQuery takes them: each row's keys, the summed columns, the samples. */
export function addParameters(add: Add): unknown[] {
  if (add.rows.length !== add.rollup.width) throw new Error(`${add.rollup.table}: ${add.rows.length} rows where its width is ${add.rollup.width}`)
  return [...add.rows.flatMap((row) => add.rollup.keys.map((key) => row[key])), ...add.delta, add.samples]
}

/** How many parameters an add of `rollup` takes. */
export const addArity = (rollup: Rollup) => rollup.width * rollup.keys.length + SUMMED.length + 1

/**
 * The upsert that adds a delta to a rollup's rows, built on expressions (db/prepared.ts compiles it once): its
 * arguments as addParameters orders them.
 */
export function addQuery(db: QueryCreator<Database>, rollup: Rollup, args: Array<Expression<unknown>>) {
  const keyCount = rollup.width * rollup.keys.length
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
}

// Each rollup's add compiled once: it runs for every phase a change moves, and building and compiling it each
// time cost more than running it.
const ADDERS = new Map(ROLLUPS.map((rollup) => [rollup, prepared<unknown[], unknown>(addArity(rollup), (db, ...args: Array<Expression<unknown>>) => addQuery(db, rollup, args))]))
