// The decision clock's job (its part of the task list, src/task-list.ts): a timer of a phase awaiting a decision
// takes effect (decision-timers.ts runClockTimer, with the state machine's moves, machine.ts CLOCK_EFFECTS).
import type { JobHandler, JobPayloads } from '../jobs/index.js'
import { CLOCK_EFFECTS } from './machine.js'
import { CLOCK_JOB, runClockTimer } from './decision-timers.js'

export const decisionTasks: { [K in typeof CLOCK_JOB]: JobHandler<JobPayloads[K]> } = {
  [CLOCK_JOB]: async (job, { app }) => runClockTimer(app, job, CLOCK_EFFECTS),
}
