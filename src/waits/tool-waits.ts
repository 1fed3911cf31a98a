// What the waits on a tool call share (the kinds: tool-approval.ts, question.ts): who may act on one, the phase
// resuming once nothing waits, and what the clock does to one (escalation; a failure at expiry). Everything runs
// on the locked run, in the caller's transaction.
import { toolWaitEnded } from '../insights/tool-waits.js'
import type { Via } from '../http/via.js'
import { PostgresAdapter } from 'kysely'
import { now } from '../ids.js'
import { AppError } from '../http/problem.js'
import { normalizeHandle } from '../principals/handles.js'
import { enqueueJob } from '../jobs/index.js'
import type { Principal } from '../principals/store.js'
import { DEFAULT_PHASE_POLICY } from '../cycles/policy.js'
import { failWaitingPhase, persistRun, type Transition } from '../runs/machine/machine.js'
import { snapshotOf } from '../runs/machine/transitions.js'
import { DELIVER_TASK_JOB, TIMEOUT_JOB, deliveryKey, timeoutKey } from '../runs/machine/jobs.js'
import type { PhaseRun, Run } from '../runs/schemas.js'
import { callsOfTask, recordToolCallEvent, updateCall, type StoredLoop, type ToolCallRow } from '../runs/tool-calls/store.js'
import { escalatedEvent, toolWaitOf } from './clock.js'
import { awaitsOperator, waitingStatus } from './kinds.js'
import { mayAct } from './who.js'

/** The backup delivery of a resumed loop on PostgreSQL (see resumeIfSettled), after the lease's length and a second. */
const resumeBackupKey = (taskId: string) => `deliver-resume:${taskId}`
const RESUME_BACKUP_MARGIN_MS = 6000

/**
 * After a decision or an answer: when the phase waits and none of its task's calls still waits for an operator,
 * the phase runs again and a delivery resumes the loop (with a fresh task time-out); otherwise it waits for the
 * next one (an approval before a question). A phase that is running (its loop has not stopped yet) is left alone:
 * the loop sees the decision itself.
 */
export async function resumeIfSettled(t: Transition, run: Run, phase: PhaseRun, taskId: string): Promise<void> {
  if (phase.status !== 'awaiting_tool_approval' && phase.status !== 'awaiting_input') return
  const rows = await callsOfTask(t.db, taskId)
  const before = snapshotOf(run)
  const waiting = waitingStatus(rows)
  if (waiting) phase.status = waiting
  else if (rows.every((r) => Number(r.step) === 0)) {
    // Calls through the task tool route (step 0): the agent is still at work; the phase runs again, nothing to deliver.
    phase.status = 'running'
    run.status = 'running'
  } else {
    phase.status = 'running'
    run.status = 'running'
    const stored = [...rows].reverse().find((r) => r.loop_state !== null)
    const job = stored ? (JSON.parse(stored.loop_state as string) as StoredLoop).job : null
    if (!job) throw new Error(`the tool calls of task ${taskId} hold no loop state`)
    await enqueueJob(t.db, DELIVER_TASK_JOB, { taskId, token: job.token, dispatch: 1 }, { jobKey: deliveryKey(taskId) })
    // On PostgreSQL a delivery is recovered by the watchdog it enqueues with its lease; an instance that dies after
    // taking the job but before that lease leaves none. A second delivery after a lease's length covers it (a
    // no-op when the loop has moved on: the task closed, or leased, or the phase waiting again).
    if (t.db.getExecutor().adapter instanceof PostgresAdapter) {
      const after = t.settings.dispatchTimeoutMs + RESUME_BACKUP_MARGIN_MS
      await enqueueJob(t.db, DELIVER_TASK_JOB, { taskId, token: job.token, dispatch: 1 }, { jobKey: resumeBackupKey(taskId), runAt: new Date(Date.now() + after) })
    }
    await enqueueJob(t.db, TIMEOUT_JOB, { taskId }, { jobKey: timeoutKey(taskId), runAt: new Date(Date.now() + t.settings.taskTimeoutS * 1000) })
  }
  await persistRun(t, run, 'tool_resume', before)
}

export type Caller = { workspaceId: string; via?: Via } & Pick<Principal, 'principalId' | 'role' | 'handle'>

/** The pool rule for one waiting call (escalated with its own clock: admins too). */
export function checkPool(caller: Caller, phase: PhaseRun, callId: string): void {
  if (mayAct(caller, phase, callId)) return
  const pool = phase.operatorPool.map((h) => `@${normalizeHandle(h)}`).join(', ')
  throw new AppError('forbidden', `Only ${pool || 'an admin or member'} may act on phase "${phase.phaseName}".`)
}

/** The system's decision at a tool wait's expiry (handle `system`, the note `expired`). */
export const SYSTEM = { principalId: 'system', handle: 'system' }

/** A waiting call of the locked run, as its clock's effect reads it (null when it no longer waits). */
export async function waitingCall(t: Transition, phase: PhaseRun, callId: string | null): Promise<ToolCallRow | null> {
  if (callId === null || !toolWaitOf(phase, callId)) return null
  const row = await t.db.selectFrom('tool_calls').selectAll().where('id', '=', callId).executeTakeFirst()
  return row && awaitsOperator(row) ? row : null
}

/** Escalation of one waiting call: admins may act on it as if in the phase's pool, and it joins their inboxes. */
export async function escalateToolWait(t: Transition, run: Run, phase: PhaseRun, callId: string | null): Promise<void> {
  const wait = callId === null ? undefined : toolWaitOf(phase, callId)
  if (!wait || wait.escalated) return
  const before = snapshotOf(run)
  wait.escalated = true
  await persistRun(t, run, 'clock', before)
  await escalatedEvent(phase.id, 'timer', wait.callId)(t, run)
}

/** Fails the waiting phase at expiry (onExpire `fail`), the call settled first so the list shows why. */
export async function failOnExpiry(t: Transition, run: Run, phase: PhaseRun, row: ToolCallRow, what: string): Promise<void> {
  const after = phase.policy?.expireAfter ?? DEFAULT_PHASE_POLICY.expireAfter
  const status = row.status === 'awaiting_approval' ? 'denied' : 'failed'
  const updated = await updateCall(t.db, row.id, { status, error: `expired: no one ${what} within ${after} (onExpire: fail)`, finished_at: now() })
  await recordToolCallEvent(t.db, updated, run.streamId, 'tool_call.updated', t.traceparent)
  await toolWaitEnded(t, run, phase, row, row.status === 'awaiting_approval' ? 'tool_approval' : 'question', 'expire', 'system')
  await failWaitingPhase(t, run, phase, `No one ${what} of phase "${phase.phaseName}" within ${after}; its policy fails it (onExpire: fail).`)
}
