// The task time-out of a phase done by a remote A2A agent stands still while Tandem's operators are asked on the
// remote's behalf (its INPUT_REQUIRED as a question): the remote waits on Tandem then, not Tandem on the remote.
// pauseClock runs in the transaction that opens the wait: the time-out job goes (and no delivery arms one while the
// clock stands still), and for a question the follow-up too (no look at the remote while it waits on our answer;
// an authorization keeps being looked at, so a remote that moves on is seen). resumeClocks
// runs in the transaction of every run change (the engine's persistRun): a phase that stops waiting and runs again
// gets its tasks' time-outs back, later by the time they stood still, and a look at the remote task at once (which
// sends the answer back).
import { PostgresAdapter, type Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import type { RunsConfig } from '../config.js'
import { now } from '../ids.js'
import { enqueueJobs, removeJobs, type JobSpec } from '../jobs/index.js'
import { DELIVER_TASK_JOB, TIMEOUT_JOB, deliveryKey, timeoutKey, type DeliveryJob } from '../runs/machine/jobs.js'
import type { Run } from '../runs/schemas.js'
import type { RunSnapshot } from '../runs/machine/transitions.js'
import { vaultOf } from '../credentials/vault.js'

const WAITING = new Set(['awaiting_input', 'awaiting_tool_approval'])

/**
 * Stops the clock of a remote task whose phase now waits on Tandem's operators (once: a running pause stays).
 * `stopLooking`: the remote is not looked at meanwhile either (its pending look goes; on PostgreSQL the delivery's
 * lease and watchdog too).
 */
export async function pauseClock(db: Kysely<Database>, taskId: string, options: { stopLooking: boolean }): Promise<void> {
  await db.updateTable('run_tasks').set({ clock_paused_at: now() }).where('id', '=', taskId).where('clock_paused_at', 'is', null).execute()
  const keys = [timeoutKey(taskId)]
  if (options.stopLooking) {
    keys.push(deliveryKey(taskId))
    if (db.getExecutor().adapter instanceof PostgresAdapter) await db.updateTable('run_tasks').set({ lease_until: null }).where('id', '=', taskId).execute()
  }
  await removeJobs(db, keys)
}

/** Starts again the clocks of the remote tasks of the phases that stopped waiting and run again. */
export async function resumeClocks(db: Kysely<Database>, settings: RunsConfig, run: Run, before: RunSnapshot): Promise<void> {
  const resumed = run.phases.filter((phase, i) => phase.status === 'running' && WAITING.has(before.phases[i] ?? ''))
  if (resumed.length === 0) return
  const rows = await db
    .selectFrom('run_tasks').innerJoin('a2a_remote_tasks', 'a2a_remote_tasks.task_id', 'run_tasks.id')
    .select(['run_tasks.id', 'run_tasks.created_at', 'run_tasks.clock_paused_ms', 'run_tasks.clock_paused_at', 'a2a_remote_tasks.remote_task_id', 'a2a_remote_tasks.remote_context_id', 'a2a_remote_tasks.endpoint_url'])
    // Through the run's tasks (run_tasks_run): no index leads with the phase run.
    .where('run_tasks.run_id', '=', run.id)
    .where('run_tasks.phase_run_id', 'in', resumed.map((p) => p.id))
    .where('run_tasks.state', '=', 'open')
    .where('run_tasks.clock_paused_at', 'is not', null)
    .execute()
  const at = now()
  const jobs: JobSpec[] = []
  for (const row of rows) {
    const paused = (Number(row.clock_paused_ms) || 0) + Math.max(0, Date.parse(at) - Date.parse(row.clock_paused_at as string))
    await db.updateTable('run_tasks').set({ clock_paused_ms: paused, clock_paused_at: null }).where('id', '=', row.id).execute()
    jobs.push({ name: TIMEOUT_JOB, payload: { taskId: row.id }, options: { jobKey: timeoutKey(row.id), runAt: new Date(Date.parse(row.created_at) + settings.taskTimeoutS * 1000 + paused) } })
    if (row.remote_task_id !== null) {
      const poll = { remoteTaskId: row.remote_task_id, remoteContextId: row.remote_context_id ?? '', endpoint: row.endpoint_url }
      const job: DeliveryJob = { taskId: row.id, token: { derivedWith: vaultOf(db).keyId }, dispatch: 1, poll }
      jobs.push({ name: DELIVER_TASK_JOB, payload: job, options: { jobKey: deliveryKey(row.id) } })
    }
  }
  await enqueueJobs(db, jobs)
}
