// The decision clock's job (its part of the task list, src/task-list.ts): a timer of a phase awaiting a decision
// takes effect (clock.ts runClockTimer, with the state machine's moves, machine.ts CLOCK_EFFECTS, and
// the tool waits', tool-calls.ts TOOL_CLOCK_EFFECTS).
import type { JobHandler, JobPayloads } from '../jobs/index.js'
import { CLOCK_EFFECTS } from '../runs/machine.js'
import { TOOL_CLOCK_EFFECTS } from '../runs/tool-calls.js'
import { CLOCK_JOB, runClockTimer } from './clock.js'

/** Every clock's effects: the decision's (machine.ts) and the tool waits' (tool-calls.ts). */
export const ALL_CLOCK_EFFECTS = { ...CLOCK_EFFECTS, ...TOOL_CLOCK_EFFECTS }

export const decisionTasks: { [K in typeof CLOCK_JOB]: JobHandler<JobPayloads[K]> } = {
  [CLOCK_JOB]: async (job, { app }) => runClockTimer(app, job, ALL_CLOCK_EFFECTS),
}
