// The scorecard figures (docs/insights.md), summed from the rollup tables whatever the grouping: per agent (the
// list), per time bucket (a series) or per cycle and phase (a breakdown). A window's whole UTC days (or hours, for
// an unfiltered hourly series) are read from the summed rollups (a row per agent and day, per agent and hour, or
// per stream or cycle, day and agent); its partial periods at either end, breakdowns and the rest from the
// per-phase-run rows — the same sums either way, so the figures do not depend on which was read. Decision times
// leave the database as their samples and are ranked here.
import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { Database } from '../db/database.js'
import { sqliteDriverOf } from '../db/sqlite-driver.js'
import { dayContribution, FIGURE_COLUMNS, parseFigures } from './day-rollup.js'
import type { InsightPhaseRunTable } from './insights.table.js'

export interface Scope {
  workspaceId: string
  from: string
  to: string
  streamId?: string
  cycleId?: string
  agentId?: string
}

export interface Figures {
  phasesAnswered: number
  decisions: { approved: number; revised: number; rejected: number; expired: number; overridden: number }
  firstPassApprovalRate: number | null
  revisionsPerApprovedOutput: number | null
  decisionTimeMs: { median: number | null; p90: number | null; samples: number }
  toolCalls: { autoRun: number; approved: number; denied: number; failed: number }
  questionsAsked: number
  usage: { inputTokens: number; outputTokens: number }
  costUsd: number | null
  costPerApprovedOutput: number | null
  runsFailed: number
}

/** How rows are grouped: each names the columns of its key (in both tables). */
export type Grouping = 'agent' | 'hour' | 'day' | 'cyclePhase'

const KEYS: Record<Grouping, RawBuilder<unknown>[]> = {
  agent: [sql`agent_id`],
  hour: [sql`substr(started_at, 1, 13)`],
  day: [sql`substr(started_at, 1, 10)`],
  cyclePhase: [sql`cycle_id`, sql`phase_id`],
}

const HOUR_MS = 3_600_000
const DAY_MS = 86_400_000
const usd = (value: number) => Math.round(value * 1e9) / 1e9
const n = (value: unknown) => Number(value ?? 0)

function where(scope: Scope): RawBuilder<unknown> {
  const parts = [sql`workspace_id = ${scope.workspaceId}`, sql`started_at >= ${scope.from}`, sql`started_at < ${scope.to}`]
  if (scope.agentId) parts.push(sql`agent_id = ${scope.agentId}`)
  if (scope.streamId) parts.push(sql`stream_id = ${scope.streamId}`)
  if (scope.cycleId) parts.push(sql`cycle_id = ${scope.cycleId}`)
  return sql.join(parts, sql` and `)
}

const SUMS = [
  'answered', 'approved', 'revised', 'rejected', 'expired', 'overridden', 'first_pass', 'revisions_approved', 'tool_auto', 'tool_approved',
  'tool_denied', 'tool_failed', 'questions', 'input_tokens', 'output_tokens', 'cost', 'priced', 'gated_cost', 'gated_priced', 'run_failed',
] as const

/**
 * A group's sums, from any table; `samples` the decision times (ms) of its waits people ended, as the database
 * joined them (each followed by a comma), parsed only when the group's figures are made.
 */
export type Sums = Record<(typeof SUMS)[number], number> & { samples: string[]; triggerName: string; phaseName: string }

function joinSamples(db: Kysely<Database>, expression: RawBuilder<unknown>, decisionMs: boolean): RawBuilder<string | null> {
  if (sqliteDriverOf(db)) return sql`group_concat(${decisionMs ? sql`${expression} || ','` : expression}, '')`
  return sql`string_agg(${decisionMs ? sql`${expression}::text || ','` : expression}, '')`
}

/** The sums of the per-phase-run rows in scope, per group. */
async function rowSums(db: Kysely<Database>, scope: Scope, grouping: Grouping): Promise<Map<string, Sums>> {
  const keys = KEYS[grouping]
  const key = keys.length === 1 ? keys[0]! : sql`${keys[0]} || '/' || ${keys[1]}`
  const groupBy = sql.join(keys)
  // Names only for the breakdown: the other groupings are summed from the covering index alone.
  const names = grouping === 'cyclePhase' ? sql`, max(trigger_name) as trigger_name, max(phase_name) as phase_name` : sql``
  const { rows } = await sql<Record<string, unknown> & { key: string; trigger_name?: string; phase_name?: string }>`select ${key} as key,
      sum(answered) as answered, sum(approved) as approved, sum(revised) as revised, sum(rejected) as rejected,
      sum(expired) as expired, sum(overridden) as overridden,
      sum(case when approved > 0 and revised = 0 then 1 else 0 end) as first_pass,
      sum(case when approved > 0 then revised else 0 end) as revisions_approved,
      sum(tool_auto) as tool_auto, sum(tool_approved) as tool_approved, sum(tool_denied) as tool_denied,
      sum(tool_failed) as tool_failed, sum(questions) as questions,
      sum(input_tokens) as input_tokens, sum(output_tokens) as output_tokens,
      sum(cost_usd) as cost, count(cost_usd) as priced,
      sum(case when gated = 1 then cost_usd end) as gated_cost, count(case when gated = 1 then cost_usd end) as gated_priced,
      sum(run_failed) as run_failed${names}
    from insight_phase_runs where ${where(scope)} group by ${groupBy}`.execute(db)
  const waits = await sql<{ key: string; samples: string | null }>`select ${key} as key, ${joinSamples(db, sql`decision_ms`, true)} as samples
    from insight_waits where ${where(scope)} and decision_ms is not null group by ${groupBy}`.execute(db)
  const samples = new Map(waits.rows.map((row) => [row.key, row.samples]))
  return new Map(rows.map((row) => [row.key, sumsOf(row, samples.get(row.key) ?? null, row.trigger_name ?? '', row.phase_name ?? '')]))
}

/** A summed rollup (day-rollup.ts) a grouping can read its whole periods from: its table, period and scope. */
interface RollupSource {
  table: 'insight_agent_days' | 'insight_agent_hours' | 'insight_scope_days'
  period: 'day' | 'hour'
  scope?: string
}

/**
 * The rollup a scope and grouping read their whole periods from, if any: the day rollups per agent unfiltered,
 * per stream or cycle when filtered by one; the hour rollups for an unfiltered hourly series. Nothing for the
 * breakdown (per cycle and phase), a hourly series filtered by stream or cycle, or a filter on both at once:
 * those read the per-phase-run rows, from the index by agent for one agent's detail.
 */
function rollupFor(scope: Scope, grouping: Grouping): RollupSource | null {
  const filtered = scope.streamId !== undefined || scope.cycleId !== undefined
  if (grouping === 'cyclePhase') return null
  if (grouping === 'hour') return filtered ? null : { table: 'insight_agent_hours', period: 'hour' }
  if (scope.streamId && scope.cycleId) return null
  if (scope.streamId) return { table: 'insight_scope_days', period: 'day', scope: `stream:${scope.streamId}` }
  if (scope.cycleId) return { table: 'insight_scope_days', period: 'day', scope: `cycle:${scope.cycleId}` }
  return { table: 'insight_agent_days', period: 'day' }
}

/**
 * The sums of a rollup's periods `[from, to)` in scope, per agent or period: its summed rows, plus what the notes of
 * changes the fold has not added yet (fold.ts) add to them — each noted phase run's row now minus the row the summed
 * rows count (none for a new one), and the decision times of its wait rows after the last they count. One
 * statement, so the summed rows and the notes are read at one moment on either database (a fold between two reads
 * would count a change twice or not at all); it costs a read of each note, not of the periods they are in.
 */
async function rollupSums(db: Kysely<Database>, scope: Scope, source: RollupSource, from: string, to: string, grouping: Grouping): Promise<Map<string, Sums>> {
  const period = sql.ref(source.period)
  const length = sql.lit(source.period === 'hour' ? 13 : 10)
  const key = grouping === 'agent' ? sql`agent_id` : period
  const noteKey = grouping === 'agent' ? sql`u.agent_id` : sql`substr(u.started_at, 1, ${length})`
  const agent = scope.agentId ? sql` and agent_id = ${scope.agentId}` : sql``
  const scoped = source.scope ? sql` and scope = ${source.scope}` : sql``
  const [kind, id] = source.scope ? (source.scope.split(':') as ['stream' | 'cycle', string]) : [null, null]
  const noteScoped = kind ? sql` and ${sql.ref(`u.${kind}_id`)} = ${id}` : sql``
  const postgres = !sqliteDriverOf(db)
  const fields = sql.join(FIGURE_COLUMNS.map((c) => sql`${sql.lit(c)}, p.${sql.ref(c)}`))
  const now = postgres ? sql`(select json_build_object(${fields})::text from insight_phase_runs p where p.phase_run_id = u.phase_run_id)` : sql`(select json_object(${fields}) from insight_phase_runs p where p.phase_run_id = u.phase_run_id)`
  const { rows } = await sql<Record<string, unknown> & { key: string; samples: string | null; old: string | null; now: string | null; noted: number }>`select ${key} as key,
      ${sql.join(SUMS.map((column) => sql`sum(${sql.ref(column)}) as ${sql.ref(column)}`))}, ${joinSamples(db, sql`decision_samples`, false)} as samples,
      null as old, null as now, 0 as noted
    from ${sql.table(source.table)} where workspace_id = ${scope.workspaceId}${scoped} and ${period} >= ${from} and ${period} < ${to}${agent}
    group by ${key} having sum(phase_runs) > 0
    union all
    select ${noteKey} as key, ${sql.join(SUMS.map((column) => sql`null as ${sql.ref(column)}`))},
      (select ${joinSamples(db, sql`w.decision_ms`, true)} from insight_waits w where w.phase_run_id = u.phase_run_id and w.seq > u.old_wait_seq and w.decision_ms is not null) as samples,
      u.old as old, ${now} as now, 1 as noted
    from insight_unfolded u where u.workspace_id = ${scope.workspaceId} and u.started_at >= ${from} and u.started_at < ${to}${scope.agentId ? sql` and u.agent_id = ${scope.agentId}` : sql``}${noteScoped}`.execute(db)
  const sums = new Map<string, Sums>()
  for (const row of rows) {
    if (Number(row.noted) === 0) {
      addSums(sums, new Map([[row.key, sumsOf(row, row.samples, '', '')]]))
      continue
    }
    // A note with no row before or now (none is left so: a row and its note are written together) adds nothing.
    if (row.old === null && row.now === null) continue
    const was = row.old === null ? null : dayContribution(parseFigures(row.old))
    const is = row.now === null ? null : dayContribution(JSON.parse(row.now) as InsightPhaseRunTable)
    const change = Object.fromEntries(SUMS.map((column) => [column, (is?.[column] ?? 0) - (was?.[column] ?? 0)]))
    addSums(sums, new Map([[row.key, sumsOf(change, row.samples, '', '')]]))
  }
  return sums
}


function sumsOf(row: Record<string, unknown>, samples: string | null, triggerName: string, phaseName: string): Sums {
  return { ...(Object.fromEntries(SUMS.map((column) => [column, n(row[column])])) as Record<(typeof SUMS)[number], number>), samples: samples ? [samples] : [], triggerName, phaseName }
}

function addSums(into: Map<string, Sums>, from: Map<string, Sums>): void {
  for (const [key, sums] of from) {
    const had = into.get(key)
    if (!had) {
      into.set(key, sums)
      continue
    }
    for (const column of SUMS) had[column] += sums[column]
    had.samples.push(...sums.samples)
  }
}

/** The sums of every group together (one agent's row from its series' buckets, which split its window). */
export function totalOf(groups: Iterable<Sums>): Sums | undefined {
  const total = new Map<string, Sums>()
  for (const sums of groups) addSums(total, new Map([['', { ...sums, samples: [...sums.samples] }]]))
  return total.get('')
}

/**
 * Where a window's sums come from: its whole periods (UTC days or hours) from the rollup the scope and grouping
 * read (rollupFor), the partial periods at its ends from the per-phase-run rows; all of it from those rows when
 * there is no such rollup or no whole period.
 */
export function sourcesOf(scope: Scope, grouping: Grouping): { rollup: (RollupSource & { from: string; to: string }) | null; rows: Array<{ from: string; to: string }> } {
  const source = rollupFor(scope, grouping)
  const size = source?.period === 'hour' ? HOUR_MS : DAY_MS
  const from = Date.parse(scope.from)
  const to = Date.parse(scope.to)
  const firstWhole = Math.ceil(from / size) * size
  const endWhole = Math.floor(to / size) * size
  if (!source || firstWhole >= endWhole) return { rollup: null, rows: [{ from: scope.from, to: scope.to }] }
  const iso = (ms: number) => new Date(ms).toISOString()
  const rows = [...(from < firstWhole ? [{ from: scope.from, to: iso(firstWhole) }] : []), ...(endWhole < to ? [{ from: iso(endWhole), to: scope.to }] : [])]
  const length = source.period === 'hour' ? 13 : 10
  return { rollup: { ...source, from: iso(firstWhole).slice(0, length), to: iso(endWhole).slice(0, length) }, rows }
}

/** The sums of every group with a counted phase run in scope, by the group's key (its columns joined by `/`). */
export async function sumsBy(db: Kysely<Database>, scope: Scope, grouping: Grouping): Promise<Map<string, Sums>> {
  const sources = sourcesOf(scope, grouping)
  const sums = new Map<string, Sums>()
  const rollup = sources.rollup
  if (rollup) {
    addSums(sums, await rollupSums(db, scope, rollup, rollup.from, rollup.to, grouping))
  }
  for (const part of sources.rows) addSums(sums, await rowSums(db, { ...scope, ...part }, grouping))
  return sums
}

/** The figures of every group with a counted phase run in scope, by the group's key. */
export async function figuresBy(db: Kysely<Database>, scope: Scope, grouping: Grouping): Promise<Map<string, Figures & { triggerName: string; phaseName: string }>> {
  const result = new Map<string, Figures & { triggerName: string; phaseName: string }>()
  for (const [key, row] of await sumsBy(db, scope, grouping)) result.set(key, { ...figuresOf(row), triggerName: row.triggerName, phaseName: row.phaseName })
  return result
}

/**
 * The decision times of joined samples ("5200,64000,"), sorted. Read digit by digit into one typed array: a
 * 30-day list holds tens of thousands, and a string and a number object each would cost more than the query.
 */
export function sortedSamples(joined: string[]): Float64Array {
  let count = 0
  for (const text of joined) for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 44) count++
  const values = new Float64Array(count)
  let k = 0
  for (const text of joined) {
    let value = 0
    let start = 0
    let digits = true
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i)
      if (code === 44) {
        // Anything but digits (a decimal point, a sign) is read by Number, which the digits agree with.
        values[k++] = digits ? value : Number(text.slice(start, i))
        value = 0
        start = i + 1
        digits = true
      } else if (code >= 48 && code <= 57) value = value * 10 + (code - 48)
      else digits = false
    }
  }
  return values.sort()
}

/** A group's figures from its sums. */
export function figuresOf(row: Sums): Figures {
  const { approved, rejected } = row
  const samples = sortedSamples(row.samples)
  return {
    phasesAnswered: row.answered,
    decisions: { approved, revised: row.revised, rejected, expired: row.expired, overridden: row.overridden },
    firstPassApprovalRate: approved + rejected === 0 ? null : row.first_pass / (approved + rejected),
    revisionsPerApprovedOutput: approved === 0 ? null : row.revisions_approved / approved,
    decisionTimeMs: samples.length === 0 ? { median: null, p90: null, samples: 0 } : { median: nearestRank(samples, 50), p90: nearestRank(samples, 90), samples: samples.length },
    toolCalls: { autoRun: row.tool_auto, approved: row.tool_approved, denied: row.tool_denied, failed: row.tool_failed },
    questionsAsked: row.questions,
    usage: { inputTokens: row.input_tokens, outputTokens: row.output_tokens },
    costUsd: row.priced > 0 ? usd(row.cost) : null,
    costPerApprovedOutput: approved === 0 || row.gated_priced === 0 ? null : usd(row.gated_cost / approved),
    runsFailed: row.run_failed,
  }
}

/** Nearest rank: sorted x₁…xₙ, pₖ = x⌈k·n/100⌉ (integer arithmetic, so no rounding moves a rank). */
export function nearestRank(sorted: ArrayLike<number>, k: number): number {
  return sorted[Math.ceil((k * sorted.length) / 100) - 1]!
}

export const EMPTY_FIGURES: Figures = {
  phasesAnswered: 0,
  decisions: { approved: 0, revised: 0, rejected: 0, expired: 0, overridden: 0 },
  firstPassApprovalRate: null,
  revisionsPerApprovedOutput: null,
  decisionTimeMs: { median: null, p90: null, samples: 0 },
  toolCalls: { autoRun: 0, approved: 0, denied: 0, failed: 0 },
  questionsAsked: 0,
  usage: { inputTokens: 0, outputTokens: 0 },
  costUsd: null,
  costPerApprovedOutput: null,
  runsFailed: 0,
}
