// The clock's job (its part of the task list, src/task-list.ts): a timer of a wait takes effect (clock.ts
// runClockTimer) as the table of effects, one row per kind of wait, says.
import type { JobHandler, JobPayloads } from '../jobs/index.js'
import { CLOCK_EFFECTS } from '../runs/machine/machine.js'
import { CLOCK_JOB, runClockTimer, type ClockEffects, type ClockKind } from './clock.js'
import { questionClock } from './question.js'
import { toolApprovalClock } from './tool-approval.js'

/** What each kind of wait's timers do: the decision's (the state machine's moves, machine.ts), each call wait's (its kind's file). */
export const ALL_CLOCK_EFFECTS: Record<ClockKind, ClockEffects> = { decision: CLOCK_EFFECTS.decision, tool_approval: toolApprovalClock, question: questionClock }

export const decisionTasks: { [K in typeof CLOCK_JOB]: JobHandler<JobPayloads[K]> } = {
  [CLOCK_JOB]: async (job, { app }) => runClockTimer(app, job, ALL_CLOCK_EFFECTS),
}
