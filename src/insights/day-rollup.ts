// The day rollups (docs/insights.md): per workspace, agent and UTC day of the phase runs' start, the sums of the
// per-phase-run rows and the decision times of the ended waits. The engine keeps them by deltas in the same
// transaction as the rows they sum: a phase run's new row minus its old one, added to its day (an upsert that
// adds, so concurrent runs of one agent never lose each other's counts), and each ended wait's time appended.
import { sql, type Kysely } from 'kysely'
import type { Database } from '../db/database.js'
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

const dayOf = (row: InsightPhaseRunTable) => row.started_at.slice(0, 10)
const negate = (delta: DayDelta) => Object.fromEntries(SUMMED.map((c) => [c, -delta[c]])) as DayDelta

/** Moves a phase run's contribution from its old row (none when new) to its new one. */
export async function phaseRowMoved(db: Kysely<Database>, old: InsightPhaseRunTable | undefined, row: InsightPhaseRunTable): Promise<void> {
  const now = dayContribution(row)
  if (!old) return addToDay(db, row.workspace_id, row.agent_id, dayOf(row), now, '')
  const was = dayContribution(old)
  if (old.agent_id !== row.agent_id || dayOf(old) !== dayOf(row)) {
    await addToDay(db, old.workspace_id, old.agent_id, dayOf(old), negate(was), '')
    return addToDay(db, row.workspace_id, row.agent_id, dayOf(row), now, '')
  }
  const delta = Object.fromEntries(SUMMED.map((c) => [c, now[c] - was[c]])) as DayDelta
  if (SUMMED.every((c) => delta[c] === 0)) return
  await addToDay(db, row.workspace_id, row.agent_id, dayOf(row), delta, '')
}

/** A decision time (ms) of a wait of a phase run that started on `startedAt`'s day. */
export async function decisionTimeAdded(db: Kysely<Database>, key: { workspace_id: string; agent_id: string; started_at: string }, ms: number): Promise<void> {
  const zero = Object.fromEntries(SUMMED.map((c) => [c, 0])) as DayDelta
  await addToDay(db, key.workspace_id, key.agent_id, key.started_at.slice(0, 10), zero, `${ms},`)
}

async function addToDay(db: Kysely<Database>, workspaceId: string, agentId: string, day: string, delta: DayDelta, samples: string): Promise<void> {
  await db
    .insertInto('insight_agent_days')
    .values({ workspace_id: workspaceId, agent_id: agentId, day, ...delta, decision_samples: samples })
    .onConflict((oc) =>
      oc.columns(['workspace_id', 'agent_id', 'day']).doUpdateSet({
        ...(Object.fromEntries(SUMMED.map((c) => [c, sql`insight_agent_days.${sql.ref(c)} + excluded.${sql.ref(c)}`])) as Record<Summed, never>),
        decision_samples: sql`insight_agent_days.decision_samples || excluded.decision_samples`,
      }),
    )
    .execute()
}
