// Tool calls (AGENTS.md, "Tools"; docs/tools-and-approvals.md): the rows, as the API shows them, their events,
// and the two operator actions on them — an approval decision and an answer to `tandem.ask_operator` — which
// run on the locked run, in the caller's transaction, and resume the phase when nothing else waits.
import { PostgresAdapter, type Kysely, type Selectable } from 'kysely'
import type { Database } from '../db/database.js'
import type { RunsConfig } from '../config.js'
import { now } from '../ids.js'
import { AppError, notFound } from '../http/problem.js'
import { normalizeHandle } from '../principals/handles.js'
import { appendEvent } from '../events/store.js'
import { enqueueJob } from '../jobs/index.js'
import type { Principal } from '../principals/store.js'
import { failWaitingPhase, persistRun, type Transition } from './machine.js'
import { DEFAULT_PHASE_POLICY } from '../cycles/policy.js'
import { escalatedEvent, remindEffect, toolWaitOf, type ClockEffects } from '../waits/clock.js'
import { withLockedRun } from './locked.js'
import { mayAct } from '../inbox/items.js'
import { snapshotOf } from './transitions.js'
import { DELIVER_TASK_JOB, TIMEOUT_JOB, deliveryKey, timeoutKey, type DeliveryJob } from './jobs.js'
import type { PhaseRun, Run } from './schemas.js'
import { statusInWords } from './schemas.js'
import type { ToolCallStatus, ToolCallTable } from './tool-calls.table.js'
import type { LoopState } from '../tools/loop.js'
import { LISTED_OUTPUT_CHARS } from './tool-calls-schemas.js'

export type ToolCallRow = Selectable<ToolCallTable>

export const ASK_OPERATOR = 'tandem.ask_operator'
/** The job that makes an approved call of the task tool route, once (keyed by the call). */
export const CALL_TOOL_JOB = 'tools.call'
export const callKey = (callId: string) => `tool-call:${callId}`
/** The backup delivery of a resumed loop on PostgreSQL (see resumeIfSettled), after the lease's length and a second. */
const resumeBackupKey = (taskId: string) => `deliver-resume:${taskId}`
const RESUME_BACKUP_MARGIN_MS = 6000

export interface ToolCallApproval {
  required: true
  decision: 'approve' | 'deny' | null
  note: string | null
  principalId: string | null
  handle: string | null
  at: string | null
}

export interface ToolCall {
  id: string
  runId: string
  phaseRunId: string
  attempt: number
  name: string
  input: unknown
  output: string | null
  error: string | null
  status: ToolCallStatus
  approval: ToolCallApproval | null
  startedAt: string
  finishedAt: string | null
}

/** What is stored with the first call of a step: the loop's state, and the delivery job that resumes it. */
export interface StoredLoop extends LoopState {
  job: DeliveryJob
}

function cut(text: string | null): string | null {
  if (text === null || text.length <= LISTED_OUTPUT_CHARS) return text
  return `${text.slice(0, LISTED_OUTPUT_CHARS)}… [cut at ${LISTED_OUTPUT_CHARS} of ${text.length} characters]`
}

/** The call as listed (output cut at LISTED_OUTPUT_CHARS), or `whole` as the agent that made it reads it. */
export function toToolCall(row: ToolCallRow, whole = false): ToolCall {
  return {
    id: row.id, runId: row.run_id, phaseRunId: row.phase_run_id, attempt: Number(row.attempt), name: row.name, input: JSON.parse(row.input),
    output: whole ? row.output : cut(row.output), error: row.error, status: row.status, approval: row.approval === null ? null : JSON.parse(row.approval),
    startedAt: row.started_at, finishedAt: row.finished_at,
  }
}

export async function recordToolCallEvent(db: Kysely<Database>, row: ToolCallRow, streamId: string, type: 'tool_call.created' | 'tool_call.updated', traceparent: string | null): Promise<void> {
  await appendEvent(db, { workspaceId: row.workspace_id, streamId, type, data: toToolCall(row), traceparent })
}

export async function listToolCalls(db: Kysely<Database>, workspaceId: string, runId: string, limit: number, after?: string): Promise<ToolCall[] | null> {
  const run = await db.selectFrom('runs').select('id').where('id', '=', runId.toLowerCase()).where('workspace_id', '=', workspaceId).executeTakeFirst()
  if (!run) return null
  let query = db.selectFrom('tool_calls').selectAll().where('run_id', '=', run.id)
  if (after) query = query.where('id', '>', after)
  return (await query.orderBy('id').limit(limit).execute()).map((row) => toToolCall(row))
}

export async function callsOfTask(db: Kysely<Database>, taskId: string): Promise<ToolCallRow[]> {
  return db.selectFrom('tool_calls').selectAll().where('task_id', '=', taskId).orderBy('step').orderBy('position').execute()
}

/** A call that waits for an operator: an approval, or the answer to a question. */
export const awaitsOperator = (row: Pick<ToolCallRow, 'status' | 'name' | 'finished_at'>) =>
  row.status === 'awaiting_approval' || (row.name === ASK_OPERATOR && row.status === 'running' && row.finished_at === null)

/** The phase status the task's waiting calls call for: an approval first, then a question; null when none waits. */
export function waitingStatus(rows: ToolCallRow[]): 'awaiting_tool_approval' | 'awaiting_input' | null {
  if (rows.some((r) => r.status === 'awaiting_approval')) return 'awaiting_tool_approval'
  if (rows.some(awaitsOperator)) return 'awaiting_input'
  return null
}

export async function updateCall(db: Kysely<Database>, id: string, changes: Partial<ToolCallTable>): Promise<ToolCallRow> {
  return db.updateTable('tool_calls').set(changes).where('id', '=', id).returningAll().executeTakeFirstOrThrow()
}

/**
 * After a decision or an answer: when the phase waits and none of its task's calls still waits for an operator,
 * the phase runs again and a delivery resumes the loop (with a fresh task time-out); otherwise it waits for the
 * next one (an approval before a question). A phase that is running (its loop has not stopped yet) is left alone:
 * the loop sees the decision itself.
 */
async function resumeIfSettled(t: Transition, run: Run, phase: PhaseRun, taskId: string): Promise<void> {
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

type Caller = { workspaceId: string } & Pick<Principal, 'principalId' | 'role' | 'handle'>

/** The pool rule for one waiting call (escalated with its own clock: admins too). */
function checkPool(caller: Caller, phase: PhaseRun, callId: string): void {
  if (mayAct(caller, phase, callId)) return
  const pool = phase.operatorPool.map((h) => `@${normalizeHandle(h)}`).join(', ')
  throw new AppError('forbidden', `Only ${pool || 'an admin or member'} may act on phase "${phase.phaseName}".`)
}

/** approve or deny a call awaiting approval; 404 for a call of another run or workspace, 409 when it does not wait. */
export async function decideToolCall(
  settings: RunsConfig,
  trx: Kysely<Database>,
  caller: Caller,
  input: { runId: string; callId: string; decision: 'approve' | 'deny'; note: string | null },
): Promise<ToolCall> {
  const outcome = await withLockedRun(trx, settings, input.runId, caller.workspaceId, async (t, run) => {
    const row = await trx.selectFrom('tool_calls').selectAll().where('id', '=', input.callId.toLowerCase()).where('run_id', '=', run.id).executeTakeFirst()
    if (!row) throw notFound('Tool call')
    const phase = run.phases.find((p) => p.id === row.phase_run_id)
    if (!phase) throw notFound('Tool call')
    checkPool(caller, phase, row.id)
    if (phase.status !== 'running' && phase.status !== 'awaiting_tool_approval') {
      throw new AppError('not-awaiting-approval', `Phase "${phase.phaseName}" ${statusInWords(phase.status)}: its tool calls take no decision.`)
    }
    if (row.status !== 'awaiting_approval') throw new AppError('not-awaiting-approval', `The call of ${row.name} ${statusInWords(row.status)}, not awaiting an approval.`)
    return toToolCall(await settleApproval(t, run, phase, row, input.decision, input.note, caller))
  })
  if (!outcome) throw notFound('Run')
  return outcome
}

/** Records the decision on a call awaiting approval (an operator's, or the system's at expiry) and resumes the phase. */
async function settleApproval(t: Transition, run: Run, phase: PhaseRun, row: ToolCallRow, decision: 'approve' | 'deny', note: string | null, by: Pick<Caller, 'principalId' | 'handle'>): Promise<ToolCallRow> {
  const at = now()
  const approval: ToolCallApproval = { required: true, decision, note, principalId: by.principalId, handle: by.handle, at }
  const who = by.handle ? `@${by.handle}` : by.principalId
  const updated = await updateCall(
    t.db,
    row.id,
    decision === 'approve'
      ? { status: 'running', approval: JSON.stringify(approval) }
      : { status: 'denied', approval: JSON.stringify(approval), error: `denied by ${who}: ${note ?? '(no note)'}`, finished_at: at },
  )
  await recordToolCallEvent(t.db, updated, run.streamId, 'tool_call.updated', t.traceparent)
  // A call of the task tool route is made by a job of its own, keyed by the call (a loop's by its delivery).
  if (decision === 'approve' && Number(row.step) === 0) await enqueueJob(t.db, CALL_TOOL_JOB, { callId: row.id }, { jobKey: callKey(row.id) })
  await resumeIfSettled(t, run, phase, row.task_id)
  return updated
}

/** An operator's answer to the phase's `tandem.ask_operator` question: the tool's result. */
export async function answerQuestion(
  settings: RunsConfig,
  trx: Kysely<Database>,
  caller: Caller,
  input: { runId: string; phaseRunId: string; text: string },
): Promise<ToolCall> {
  const outcome = await withLockedRun(trx, settings, input.runId, caller.workspaceId, async (t, run) => {
    const phase = run.phases.find((p) => p.id === input.phaseRunId.toLowerCase())
    if (!phase) throw notFound('Phase')
    const row = await trx
      .selectFrom('tool_calls').selectAll()
      .where('phase_run_id', '=', phase.id).where('name', '=', ASK_OPERATOR).where('status', '=', 'running')
      .orderBy('id', 'desc').executeTakeFirst()
    checkPool(caller, phase, row?.id ?? '')
    if (phase.status !== 'awaiting_input' || !row) {
      throw new AppError('not-awaiting-input', `Phase "${phase.phaseName}" ${statusInWords(phase.status)}, not waiting for an answer to a question.`)
    }
    const updated = await updateCall(trx, row.id, { status: 'succeeded', output: input.text, finished_at: now() })
    await recordToolCallEvent(trx, updated, run.streamId, 'tool_call.updated', t.traceparent)
    await resumeIfSettled(t, run, phase, row.task_id)
    return toToolCall(updated)
  })
  if (!outcome) throw notFound('Run')
  return outcome
}

/** The system's decision at a tool wait's expiry (handle `system`, the note `expired`). */
const SYSTEM = { principalId: 'system', handle: 'system' }

/** A waiting call of the locked run, as its clock's effect reads it (null when it no longer waits). */
async function waitingCall(t: Transition, phase: PhaseRun, callId: string | null): Promise<ToolCallRow | null> {
  if (callId === null || !toolWaitOf(phase, callId)) return null
  const row = await t.db.selectFrom('tool_calls').selectAll().where('id', '=', callId).executeTakeFirst()
  return row && awaitsOperator(row) ? row : null
}

/** Escalation of one waiting call: admins may act on it as if in the phase's pool, and it joins their inboxes. */
async function escalateToolWait(t: Transition, run: Run, phase: PhaseRun, callId: string | null): Promise<void> {
  const wait = callId === null ? undefined : toolWaitOf(phase, callId)
  if (!wait || wait.escalated) return
  const before = snapshotOf(run)
  wait.escalated = true
  await persistRun(t, run, 'clock', before)
  await escalatedEvent(phase.id, 'timer', wait.callId)(t, run)
}

/** Fails the waiting phase at expiry (onExpire `fail`), the call settled first so the list shows why. */
async function failOnExpiry(t: Transition, run: Run, phase: PhaseRun, row: ToolCallRow, what: string): Promise<void> {
  const after = phase.policy?.expireAfter ?? DEFAULT_PHASE_POLICY.expireAfter
  const status = row.status === 'awaiting_approval' ? 'denied' : 'failed'
  const updated = await updateCall(t.db, row.id, { status, error: `expired: no one ${what} within ${after} (onExpire: fail)`, finished_at: now() })
  await recordToolCallEvent(t.db, updated, run.streamId, 'tool_call.updated', t.traceparent)
  await failWaitingPhase(t, run, phase, `No one ${what} of phase "${phase.phaseName}" within ${after}; its policy fails it (onExpire: fail).`)
}

/** Expiry of a tool approval: onExpire `approve` approves the call, `reject` (the default) denies it, `fail` fails the phase. */
async function expireApproval(t: Transition, run: Run, phase: PhaseRun, callId: string | null): Promise<void> {
  const row = await waitingCall(t, phase, callId)
  if (!row) return
  const onExpire = phase.policy?.onExpire ?? DEFAULT_PHASE_POLICY.onExpire
  if (onExpire === 'fail') return failOnExpiry(t, run, phase, row, `decided the call of ${row.name}`)
  await settleApproval(t, run, phase, row, onExpire === 'approve' ? 'approve' : 'deny', 'expired', SYSTEM)
}

/** What the model reads when a question expires unanswered (onExpire `reject` or `approve`: an answer cannot be made up). */
export const NO_ANSWER = 'no answer before the deadline'

/** Expiry of a question: the call fails with NO_ANSWER and the loop goes on; onExpire `fail` fails the phase. */
async function expireQuestion(t: Transition, run: Run, phase: PhaseRun, callId: string | null): Promise<void> {
  const row = await waitingCall(t, phase, callId)
  if (!row) return
  if ((phase.policy?.onExpire ?? DEFAULT_PHASE_POLICY.onExpire) === 'fail') return failOnExpiry(t, run, phase, row, 'answered the question')
  const updated = await updateCall(t.db, row.id, { status: 'failed', error: NO_ANSWER, finished_at: now() })
  await recordToolCallEvent(t.db, updated, run.streamId, 'tool_call.updated', t.traceparent)
  await resumeIfSettled(t, run, phase, row.task_id)
}

/** What the tool waits' timers do (src/waits/clock.ts runs them, once per key, under the run's lock). */
export const TOOL_CLOCK_EFFECTS: { tool_approval: ClockEffects; question: ClockEffects } = {
  tool_approval: { remind: remindEffect, escalate: escalateToolWait, expire: expireApproval },
  question: { remind: remindEffect, escalate: escalateToolWait, expire: expireQuestion },
}

/**
 * What a call of the task tool route reads when it was still in flight as its task ended: the process making it
 * stopped (a restart), or the task ended first. Settled as failed, the way the model loop's calls are (tool-exec.ts).
 */
export const UNSETTLED = 'interrupted: the task ended while this call was in flight (Tandem stopped, or the task ended first); its outcome was not recorded, and it may or may not have taken effect.'

const ACTIVE: ReadonlyArray<PhaseRun['status']> = ['running', 'awaiting_tool_approval', 'awaiting_input']

/**
 * persistRun, for the phases that stopped being at work in this step (answered, failed, canceled): their calls of
 * the task tool route still in flight (dispatched, never finished) whose task is closed are settled as failed
 * (UNSETTLED), so none stays `running` forever. A request that was really still making one finds it settled and
 * leaves it so (tool-exec.ts finishCall).
 */
export async function settleEndedCalls(t: Transition, run: Run, before: { status: string; phases: ReadonlyArray<PhaseRun['status']> }): Promise<void> {
  if (before.status === 'new' || t.routeCalls === false) return
  const ended = run.phases.filter((p) => ACTIVE.includes(before.phases[p.index]!) && !ACTIVE.includes(p.status)).map((p) => p.id)
  if (ended.length === 0) return
  const rows = await t.db
    .selectFrom('tool_calls')
    .innerJoin('run_tasks', 'run_tasks.id', 'tool_calls.task_id')
    .select('tool_calls.id')
    .where('tool_calls.run_id', '=', run.id)
    .where('tool_calls.phase_run_id', 'in', ended)
    .where('tool_calls.step', '=', 0)
    .where('tool_calls.status', '=', 'running')
    .where('tool_calls.dispatched_at', 'is not', null)
    .where('tool_calls.finished_at', 'is', null)
    .where('run_tasks.state', '!=', 'open')
    .execute()
  for (const { id } of rows) {
    const updated = await updateCall(t.db, id, { status: 'failed', error: UNSETTLED, finished_at: now() })
    await recordToolCallEvent(t.db, updated, run.streamId, 'tool_call.updated', t.traceparent)
  }
}
