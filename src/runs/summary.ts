// A run's summary (docs/runs-and-events.md "Events"): what run.created and run.updated carry — the run's own fields and, per
// phase, its status, attempts, a preview of its output, its error, its approvals and last decision. No goals,
// instructions or decision history (GET /api/runs/{id} has them), so an event of a run stays small however
// many times its phases were revised.
import Type, { type Static } from 'typebox'
import { Nullable, StringEnum, Uuid } from '../http/schemas.js'
import { Decision, PHASE_STATUSES, Run, RunProblem } from './schemas.js'
import { OUTPUT_PREVIEW_LENGTH } from './limits.js'

export const PhaseSummary = Type.Object(
  {
    id: Uuid,
    index: Type.Integer({ minimum: 0 }),
    phaseName: Type.String(),
    agentId: Uuid,
    status: StringEnum(PHASE_STATUSES),
    attempts: Type.Integer({ minimum: 0 }),
    output: Nullable(Type.Object({ messageId: Uuid, preview: Type.String({ description: `the output's first ${OUTPUT_PREVIEW_LENGTH} characters, with … when cut` }) })),
    error: Nullable(RunProblem),
    approvals: Type.Integer({ minimum: 0, description: 'how many times the phase was approved' }),
    lastDecision: Type.Union([Decision, Type.Null()]),
  },
  { title: 'PhaseSummary' },
)
export type PhaseSummary = Static<typeof PhaseSummary>

const { phases: _phases, ...runFields } = Run.properties
export const RunSummary = Type.Object(
  { ...runFields, phases: Type.Array(PhaseSummary) },
  { title: 'RunSummary', description: 'what run.created and run.updated carry: the run without goals, instructions or decision history (GET /api/runs/{id} has them)' },
)
export type RunSummary = Static<typeof RunSummary>

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
