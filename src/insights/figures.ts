// The scorecard figures (docs/insights.md), summed from the rollup tables in two grouped queries — one over the
// phase runs, one over the waits for the nearest-rank decision times — whatever the grouping: per agent (the
// list), per time bucket (a series) or per cycle and phase (a breakdown).
import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { Database } from '../db/database.js'
import { sqliteDriverOf } from '../db/sqlite-driver.js'

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

const usd = (value: number) => Math.round(value * 1e9) / 1e9
const n = (value: unknown) => Number(value ?? 0)

function where(scope: Scope): RawBuilder<unknown> {
  const parts = [sql`workspace_id = ${scope.workspaceId}`, sql`started_at >= ${scope.from}`, sql`started_at < ${scope.to}`]
  if (scope.agentId) parts.push(sql`agent_id = ${scope.agentId}`)
  if (scope.streamId) parts.push(sql`stream_id = ${scope.streamId}`)
  if (scope.cycleId) parts.push(sql`cycle_id = ${scope.cycleId}`)
  return sql.join(parts, sql` and `)
}

interface PhaseSums {
  key: string
  answered: unknown; approved: unknown; revised: unknown; rejected: unknown; expired: unknown; overridden: unknown
  first_pass: unknown; revisions_approved: unknown
  tool_auto: unknown; tool_approved: unknown; tool_denied: unknown; tool_failed: unknown; questions: unknown
  input_tokens: unknown; output_tokens: unknown
  cost: number | string | null; priced: unknown; gated_cost: number | string | null; gated_priced: unknown
  run_failed: unknown
  trigger_name?: string; phase_name?: string
}

/** The figures of every group with a counted phase run in scope, by the group's key (its columns joined by `/`). */
export async function figuresBy(db: Kysely<Database>, scope: Scope, grouping: Grouping): Promise<Map<string, Figures & { triggerName: string; phaseName: string }>> {
  const keys = KEYS[grouping]
  const key = keys.length === 1 ? keys[0]! : sql`${keys[0]} || '/' || ${keys[1]}`
  const groupBy = sql.join(keys)
  // Names only for the breakdown: the other groupings are summed from the covering index alone.
  const names = grouping === 'cyclePhase' ? sql`, max(trigger_name) as trigger_name, max(phase_name) as phase_name` : sql``
  const { rows } = await sql<PhaseSums>`select ${key} as key,
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
  const times = await decisionTimes(db, scope, key, groupBy)
  const result = new Map<string, Figures & { triggerName: string; phaseName: string }>()
  for (const row of rows) {
    const approved = n(row.approved)
    const rejected = n(row.rejected)
    const cost = n(row.priced) > 0 ? usd(n(row.cost)) : null
    const gatedCost = n(row.gated_priced) > 0 ? n(row.gated_cost) : null
    result.set(row.key, {
      phasesAnswered: n(row.answered),
      decisions: { approved, revised: n(row.revised), rejected, expired: n(row.expired), overridden: n(row.overridden) },
      firstPassApprovalRate: approved + rejected === 0 ? null : n(row.first_pass) / (approved + rejected),
      revisionsPerApprovedOutput: approved === 0 ? null : n(row.revisions_approved) / approved,
      decisionTimeMs: times.get(row.key) ?? { median: null, p90: null, samples: 0 },
      toolCalls: { autoRun: n(row.tool_auto), approved: n(row.tool_approved), denied: n(row.tool_denied), failed: n(row.tool_failed) },
      questionsAsked: n(row.questions),
      usage: { inputTokens: n(row.input_tokens), outputTokens: n(row.output_tokens) },
      costUsd: cost,
      costPerApprovedOutput: approved === 0 || gatedCost === null ? null : usd(gatedCost / approved),
      runsFailed: n(row.run_failed),
      triggerName: row.trigger_name ?? '',
      phaseName: row.phase_name ?? '',
    })
  }
  return result
}

/** Nearest rank: sorted x₁…xₙ, pₖ = x⌈k·n/100⌉ (integer arithmetic, so no rounding moves a rank). */
export function nearestRank(sorted: number[], k: number): number {
  return sorted[Math.ceil((k * sorted.length) / 100) - 1]!
}

// SQLite: an aggregate of our own (made once per database) collects a group's samples and answers
// "samples,median,p90"; PostgreSQL: percentile_disc, whose ⌈p·n⌉ is taken in floating point — the fraction is
// lowered by 10⁻¹² so that a product such as 0.9 × 70 = 63.000000000000014 still ranks 63 (a true fraction
// part is at least 0.01, so the nudge never crosses one for fewer than 10¹⁰ samples).
const sqliteWithRanks = new WeakSet<object>()
function ranksSql(db: Kysely<Database>): RawBuilder<string> {
  const driver = sqliteDriverOf(db)
  if (!driver) {
    return sql<string>`count(*) || ',' || percentile_disc(${0.5 - 1e-12}::float8) within group (order by decision_ms) || ',' || percentile_disc(${0.9 - 1e-12}::float8) within group (order by decision_ms)`
  }
  if (!sqliteWithRanks.has(driver)) {
    driver.raw.aggregate('tandem_ranks', {
      start: () => [] as number[],
      step: (samples: number[], value: unknown) => {
        samples.push(Number(value))
      },
      result: (samples: number[]) => {
        samples.sort((a, b) => a - b)
        return `${samples.length},${nearestRank(samples, 50)},${nearestRank(samples, 90)}`
      },
    })
    sqliteWithRanks.add(driver)
  }
  return sql<string>`tandem_ranks(decision_ms)`
}

/** Median and p90 of the waits people ended, per group, computed in the database: three numbers per group leave it. */
async function decisionTimes(db: Kysely<Database>, scope: Scope, key: RawBuilder<unknown>, groupBy: RawBuilder<unknown>): Promise<Map<string, Figures['decisionTimeMs']>> {
  const { rows } = await sql<{ key: string; ranks: string }>`select ${key} as key, ${ranksSql(db)} as ranks
    from insight_waits where ${where(scope)} and decision_ms is not null group by ${groupBy}`.execute(db)
  return new Map(rows.map((row) => {
    const [samples, median, p90] = row.ranks.split(',').map(Number) as [number, number, number]
    return [row.key, { median, p90, samples }]
  }))
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
