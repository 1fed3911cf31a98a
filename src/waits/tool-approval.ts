// The tool approval, a kind of wait: a call of a tool whose approval rule says so waits, `awaiting_approval`, for
// an operator of the phase's pool to approve or deny it (docs/tools-and-approvals.md); on the clock, expiry
// decides it as the policy's onExpire says.
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import type { RunsConfig } from '../config.js'
import { now } from '../ids.js'
import { AppError, notFound } from '../http/problem.js'
import { enqueueJob } from '../jobs/index.js'
import { DEFAULT_PHASE_POLICY } from '../cycles/policy.js'
import type { Transition } from '../runs/machine/machine.js'
import { withLockedRun } from '../runs/machine/locked.js'
import type { PhaseRun, Run } from '../runs/schemas.js'
import { statusInWords } from '../runs/schemas.js'
import { CALL_TOOL_JOB, callKey, recordToolCallEvent, toToolCall, updateCall, type ToolCall, type ToolCallApproval, type ToolCallRow } from '../runs/tool-calls/store.js'
import { remindEffect, type ClockEffects } from './clock.js'
import { toolWaitEnded } from '../insights/tool-waits.js'
import { SYSTEM, checkPool, escalateToolWait, failOnExpiry, resumeIfSettled, waitingCall, type Caller } from './tool-waits.js'

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
async function settleApproval(t: Transition, run: Run, phase: PhaseRun, row: ToolCallRow, decision: 'approve' | 'deny', note: string | null, by: Pick<Caller, 'principalId' | 'handle' | 'via'>): Promise<ToolCallRow> {
  const at = now()
  const approval: ToolCallApproval = { required: true, decision, note, principalId: by.principalId, handle: by.handle, at, ...(by.via ? { via: by.via } : {}) }
  const who = by.handle ? `@${by.handle}` : by.principalId
  const updated = await updateCall(
    t.db,
    row.id,
    decision === 'approve'
      ? { status: 'running', approval: JSON.stringify(approval) }
      : { status: 'denied', approval: JSON.stringify(approval), error: `denied by ${who}: ${note ?? '(no note)'}`, finished_at: at },
  )
  await recordToolCallEvent(t.db, updated, run.streamId, 'tool_call.updated', t.traceparent)
  await toolWaitEnded(t, run, phase, row, 'tool_approval', decision, by.handle)
  // A call of the task tool route is made by a job of its own, keyed by the call (a loop's by its delivery).
  if (decision === 'approve' && Number(row.step) === 0) await enqueueJob(t.db, CALL_TOOL_JOB, { callId: row.id }, { jobKey: callKey(row.id) })
  await resumeIfSettled(t, run, phase, row.task_id)
  return updated
}

/** Expiry of a tool approval: onExpire `approve` approves the call, `reject` (the default) denies it, `fail` fails the phase. */
async function expireApproval(t: Transition, run: Run, phase: PhaseRun, callId: string | null): Promise<void> {
  const row = await waitingCall(t, phase, callId)
  if (!row) return
  const onExpire = phase.policy?.onExpire ?? DEFAULT_PHASE_POLICY.onExpire
  if (onExpire === 'fail') return failOnExpiry(t, run, phase, row, `decided the call of ${row.name}`)
  await settleApproval(t, run, phase, row, onExpire === 'approve' ? 'approve' : 'deny', 'expired', SYSTEM)
}

/** What a tool approval's timers do (clock.ts runs them, once per key, under the run's lock). */
export const toolApprovalClock: ClockEffects = { remind: remindEffect, escalate: escalateToolWait, expire: expireApproval }
