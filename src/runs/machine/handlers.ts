// The run engine's job handlers (its part of the task list, src/task-list.ts): start a queued run, deliver a
// task, time a task out. Each acts in a transaction of its own on the locked run.
import type { JobHandler, JobPayloads } from '../../jobs/index.js'
import { beginRun, runProblem } from './machine.js'
import { deliverTask, settleTask } from '../tasks/delivery.js'
import { withLockedRun } from './locked.js'
import { DELIVER_TASK_JOB, START_JOB, TIMEOUT_JOB } from './jobs.js'

export const runTasks: { [K in typeof START_JOB | typeof DELIVER_TASK_JOB | typeof TIMEOUT_JOB]: JobHandler<JobPayloads[K]> } = {
  [START_JOB]: async ({ runId }, { app }) => {
    await app.database.db.transaction().execute((trx) => withLockedRun(trx, app.config.runs, runId, null, (t, run) => beginRun(t, run)))
  },
  [DELIVER_TASK_JOB]: async (job, { app, signal }) => deliverTask(job, app, signal),
  [TIMEOUT_JOB]: async ({ taskId }, { app }) => {
    const seconds = app.config.runs.taskTimeoutS
    await settleTask(app.database.db, app.config.runs, taskId, { problem: runProblem('agent-timeout', `The agent did not answer within ${seconds} s (TANDEM_TASK_TIMEOUT_S).`) })
  },
}
