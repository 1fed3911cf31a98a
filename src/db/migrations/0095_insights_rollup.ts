// Migration 0095's backfill: the scorecard rollup rows of a run, from its document alone — a frozen copy of
// src/insights/rollup-rows.ts as it was when 0095 landed (a migration never runs the live feature code, which may
// change after it). Not a migration itself: migrate.ts lists only the migrations.
import type { InsightPhaseRunTable, InsightWaitTable } from '../../insights/insights.table.js'

const NIL_UUID = '00000000-0000-0000-0000-000000000000'
export const ASK_OPERATOR = 'tandem.ask_operator'
/** The failures that are the agent's doing: a failed run counts against its agent only for these. */
export const AGENT_FAILURES = ['agent-failed', 'agent-unreachable', 'agent-rejected', 'agent-timeout']

/** The parts of a run document the rollup reads (a structural subset of the run schema). */
export interface RunLike {
  id: string
  streamId: string
  cycleId: string
  triggerName: string
  status: string
  error: { type: string } | null
  phases: PhaseLike[]
}
export interface PhaseLike {
  id: string
  phaseId: string
  phaseName: string
  agentId: string
  autoAdvance: boolean
  status: string
  output: unknown
  error: { type: string } | null
  decisions: Array<{ decision: string; at: string; handle?: string | null; override?: true; expired?: true }>
  startedAt: string | null
  usage?: { inputTokens: number; outputTokens: number } | null
  costUsd?: number | null
  deadlines?: { since: string } | null
}
export interface CallLike { phase_run_id: string; name: string; status: string; approval: string | null }
export interface TaskLike { phase_run_id: string; attempt: number; state: string; closed_at: string | null }

export type WaitOutcome = InsightWaitTable['outcome']

/** The decisions of a phase that ended a wait, each with its index and outcome (a quorum's earlier approves end none). */
export function endedWaits(phase: PhaseLike): Array<{ seq: number; outcome: WaitOutcome; at: string; byPerson: boolean }> {
  const ended: Array<{ seq: number; outcome: WaitOutcome; at: string; byPerson: boolean }> = []
  const last = phase.decisions.length - 1
  phase.decisions.forEach((d, seq) => {
    if (d.expired) ended.push({ seq, outcome: 'expired', at: d.at, byPerson: false })
    else if (d.decision === 'revise') ended.push({ seq, outcome: 'revised', at: d.at, byPerson: true })
    else if (d.decision === 'reject') ended.push({ seq, outcome: 'rejected', at: d.at, byPerson: true })
    else if (d.decision === 'approve' && seq === last && phase.status === 'succeeded') ended.push({ seq, outcome: 'approved', at: d.at, byPerson: true })
  })
  return ended
}

const isCounted = (phase: PhaseLike): phase is PhaseLike & { startedAt: string } => phase.agentId !== NIL_UUID && phase.startedAt !== null

const problemCode = (problem: { type: string } | null) => problem?.type.split(':').pop() ?? null

/** The phase run's rollup row; tool-call counts from `calls` (the phase's own, or none). */
export function phaseRow(workspaceId: string, run: RunLike, phase: PhaseLike & { startedAt: string }, calls: CallLike[]): InsightPhaseRunTable {
  const waits = endedWaits(phase)
  const outcomes = (o: WaitOutcome) => waits.filter((w) => w.outcome === o).length
  const tools = calls.filter((c) => c.phase_run_id === phase.id && c.name !== ASK_OPERATOR)
  const decided = (decision: string) => tools.filter((c) => c.approval !== null && (JSON.parse(c.approval) as { decision?: string }).decision === decision).length
  const failing = run.status === 'failed' && phase.status === 'failed' && problemCode(run.error) === problemCode(phase.error)
  return {
    phase_run_id: phase.id,
    workspace_id: workspaceId,
    agent_id: phase.agentId,
    run_id: run.id,
    stream_id: run.streamId,
    cycle_id: run.cycleId,
    trigger_name: run.triggerName,
    phase_id: phase.phaseId,
    phase_name: phase.phaseName,
    started_at: phase.startedAt,
    gated: phase.autoAdvance ? 0 : 1,
    answered: phase.output ? 1 : 0,
    approved: outcomes('approved'),
    revised: outcomes('revised'),
    rejected: outcomes('rejected'),
    expired: outcomes('expired'),
    overridden: phase.decisions.filter((d) => d.override).length,
    tool_auto: tools.filter((c) => c.approval === null).length,
    tool_approved: decided('approve'),
    tool_denied: decided('deny'),
    tool_failed: tools.filter((c) => c.status === 'failed').length,
    questions: calls.filter((c) => c.phase_run_id === phase.id && c.name === ASK_OPERATOR).length,
    input_tokens: phase.usage?.inputTokens ?? 0,
    output_tokens: phase.usage?.outputTokens ?? 0,
    cost_usd: phase.costUsd ?? null,
    run_failed: failing && AGENT_FAILURES.includes(problemCode(run.error) ?? '') ? 1 : 0,
  }
}

/** A wait row: `since` is when the wait began (the engine's deadlines.since; the backfill's stand-in). */
export function waitRow(workspaceId: string, run: RunLike, phase: PhaseLike & { startedAt: string }, wait: ReturnType<typeof endedWaits>[number], since: string | null): InsightWaitTable {
  return {
    phase_run_id: phase.id,
    seq: wait.seq,
    workspace_id: workspaceId,
    agent_id: phase.agentId,
    stream_id: run.streamId,
    cycle_id: run.cycleId,
    phase_id: phase.phaseId,
    started_at: phase.startedAt,
    outcome: wait.outcome,
    decision_ms: wait.byPerson && since !== null ? Math.max(0, Date.parse(wait.at) - Date.parse(since)) : null,
    ended_at: wait.at,
  }
}

/**
 * Every rollup row of a stored run (the backfill): a wait's start is taken as the close of the task whose answer
 * it awaited (attempt = revises before it + 1), which is when the engine began the wait.
 */
export function rollupOfRun(workspaceId: string, run: RunLike, calls: CallLike[], tasks: TaskLike[]): { phases: InsightPhaseRunTable[]; waits: InsightWaitTable[] } {
  const phases: InsightPhaseRunTable[] = []
  const waits: InsightWaitTable[] = []
  for (const phase of run.phases) {
    if (!isCounted(phase)) continue
    phases.push(phaseRow(workspaceId, run, phase, calls))
    for (const wait of endedWaits(phase)) {
      const attempt = phase.decisions.slice(0, wait.seq).filter((d) => d.decision === 'revise').length + 1
      const task = tasks.find((t) => t.phase_run_id === phase.id && t.attempt === attempt && t.state === 'answered')
      waits.push(waitRow(workspaceId, run, phase, wait, task?.closed_at ?? null))
    }
  }
  return { phases, waits }
}

export { isCounted }
