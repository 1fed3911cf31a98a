// A run's summary (RUNS.md "Events"): what run.created and run.updated carry — the run's own fields and, per
// phase, its status, attempts, a preview of its output, its error, its approvals and last decision. No goals,
// instructions or decision history (GET /api/runs/{id} has them), so an event of a run stays small however
// many times its phases were revised.
import type { PhaseRun, Run } from './schemas.js'
import { OUTPUT_PREVIEW_LENGTH } from './limits.js'

export interface PhaseSummary {
  id: string
  index: number
  phaseName: string
  agentId: string
  status: PhaseRun['status']
  attempts: number
  output: { messageId: string; preview: string } | null
  error: PhaseRun['error']
  /** How many times the phase was approved (0 or 1 today). */
  approvals: number
  lastDecision: PhaseRun['decisions'][number] | null
}

export type RunSummary = Omit<Run, 'phases'> & { phases: PhaseSummary[] }

/** The preview of a text: at most OUTPUT_PREVIEW_LENGTH characters (code points), with … when cut. */
export function preview(text: string): string {
  const chars = Array.from(text)
  return chars.length <= OUTPUT_PREVIEW_LENGTH ? text : `${chars.slice(0, OUTPUT_PREVIEW_LENGTH - 1).join('')}…`
}

export function summarize(run: Run): RunSummary {
  const { phases, ...own } = run
  return {
    ...own,
    phases: phases.map((p) => ({
      id: p.id,
      index: p.index,
      phaseName: p.phaseName,
      agentId: p.agentId,
      status: p.status,
      attempts: p.attempts,
      output: p.output && { messageId: p.output.messageId, preview: preview(p.output.text) },
      error: p.error,
      approvals: p.decisions.filter((d) => d.decision === 'approve').length,
      lastDecision: p.decisions.at(-1) ?? null,
    })),
  }
}
