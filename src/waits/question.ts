// The question, a kind of wait: an agent calls `tandem.ask_operator` (kinds.ts ASK_OPERATOR) and the call waits,
// running and unfinished, for an operator of the phase's pool to answer; the answer is the tool's result. On the
// clock, expiry answers nothing (NO_ANSWER) or, with onExpire `fail`, fails the phase.
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import type { RunsConfig } from '../config.js'
import { now } from '../ids.js'
import { AppError, notFound } from '../http/problem.js'
import { DEFAULT_PHASE_POLICY } from '../cycles/policy.js'
import type { Transition } from '../runs/machine/machine.js'
import { withLockedRun } from '../runs/machine/locked.js'
import type { PhaseRun, Run } from '../runs/schemas.js'
import { statusInWords } from '../runs/schemas.js'
import { recordToolCallEvent, toToolCall, updateCall, type AnsweredBy, type ToolCall } from '../runs/tool-calls/store.js'
import { remindEffect, type ClockEffects } from './clock.js'
import { toolWaitEnded } from '../insights/tool-waits.js'
import { ASK_OPERATOR } from './kinds.js'
import { checkPool, escalateToolWait, failOnExpiry, resumeIfSettled, waitingCall, type Caller } from './tool-waits.js'

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
      // Through the run's calls (tool_calls_run): no index leads with the phase run.
      .where('run_id', '=', run.id).where('phase_run_id', '=', phase.id).where('name', '=', ASK_OPERATOR).where('status', '=', 'running')
      .orderBy('id', 'desc').executeTakeFirst()
    checkPool(caller, phase, row?.id ?? '')
    if (phase.status !== 'awaiting_input' || !row) {
      throw new AppError('not-awaiting-input', `Phase "${phase.phaseName}" ${statusInWords(phase.status)}, not waiting for an answer to a question.`)
    }
    const at = now()
    const answeredBy: AnsweredBy = { principalId: caller.principalId, handle: caller.handle, at, via: caller.via ?? 'api' }
    const updated = await updateCall(trx, row.id, { status: 'succeeded', output: input.text, finished_at: at, answered_by: JSON.stringify(answeredBy) })
    await recordToolCallEvent(trx, updated, run.streamId, 'tool_call.updated', t.traceparent)
    await toolWaitEnded(t, run, phase, row, 'question', 'answer', caller.handle)
    await resumeIfSettled(t, run, phase, row.task_id)
    return toToolCall(updated)
  })
  if (!outcome) throw notFound('Run')
  return outcome
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
  await toolWaitEnded(t, run, phase, row, 'question', 'expire', 'system')
  await resumeIfSettled(t, run, phase, row.task_id)
}

/** What a question's timers do (clock.ts runs them, once per key, under the run's lock). */
export const questionClock: ClockEffects = { remind: remindEffect, escalate: escalateToolWait, expire: expireQuestion }
