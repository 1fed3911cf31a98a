// A remote A2A task that waits on its caller becomes one of Tandem's own waits on a call of the phase's task (the
// task tool route's kind, step 0), in the inbox of the phase's pool:
// - INPUT_REQUIRED: a `tandem.ask_operator` question (the phase awaits input); the answer, or `no answer before the
//   deadline`, is sent back;
// - AUTH_REQUIRED: an `a2a.authorize` call awaiting approval, input `{ message }` (the phase awaits a tool approval);
//   `approved by @h: note` or `denied by @h: note` is sent back, and an approved call is then settled `succeeded`.
//   A remote that moved on before its authorization was sent back gets nothing: the call is settled `succeeded`
//   (undecided, when no one decided yet) and the phase goes on.
// While a wait is open the task's clock stands still (remote-clock.ts); a question's remote is not looked at
// meanwhile, an authorization's is (so that its moving on is seen). Each reply is sent back once: the ledger
// keeps the last call whose reply left (relayed_call_id); calls are made one after another, so every call up to it
// (ids are time-ordered) has been answered.
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import type { RunsConfig } from '../config.js'
import { newId, now } from '../ids.js'
import { withLockedRun } from '../runs/machine/locked.js'
import { persistRun } from '../runs/machine/machine.js'
import { markRouteCalls } from '../runs/store.js'
import { snapshotOf } from '../runs/machine/transitions.js'
import { callsOfTask, recordToolCallEvent, updateCall, type ToolCallApproval, type ToolCallRow } from '../runs/tool-calls/store.js'
import { ASK_OPERATOR, waitingStatus } from '../waits/kinds.js'
import { NO_ANSWER } from '../waits/question.js'
import { resumeIfSettled } from '../waits/tool-waits.js'
import { A2A_AUTHORIZE } from './names.js'
import { pauseClock } from './remote-clock.js'

export type WaitState = { open: true } | { answer: string; callId: string } | null

export interface RemoteWaits {
  /** The task's question: still open, answered and not yet sent back, or none. */
  question(taskId: string): Promise<WaitState>
  /** The task's authorization: still awaiting approval, decided and not yet sent back, or none. */
  authorization(taskId: string): Promise<WaitState>
  /** Asks the phase's pool (a new wait); false when the task is no longer open. */
  ask(taskId: string, question: string): Promise<boolean>
  /** Asks the phase's pool to approve the remote's authorization (a new wait); false when the task is no longer open. */
  authorize(taskId: string, message: string): Promise<boolean>
  /** Records the call's reply as sent (before it is sent); an approved authorization is settled `succeeded` with it. */
  relayed(taskId: string, callId: string, reply?: string): Promise<void>
  /** The remote moved on from AUTH_REQUIRED: an authorization not sent back is settled `succeeded`, never sent. */
  movedOn(taskId: string): Promise<void>
}

const latestCall = (db: Kysely<Database>, taskId: string, name: string) =>
  db.selectFrom('tool_calls').selectAll().where('task_id', '=', taskId).where('name', '=', name).where('step', '=', 0).orderBy('id', 'desc').executeTakeFirst()

async function relayedUpTo(db: Kysely<Database>, taskId: string): Promise<string | null> {
  const ledger = await db.selectFrom('a2a_remote_tasks').select('relayed_call_id').where('task_id', '=', taskId).executeTakeFirst()
  return ledger?.relayed_call_id ?? null
}

const isRelayed = (callId: string, upTo: string | null) => upTo !== null && callId <= upTo

/** What an authorization's decision reads as when sent back. */
function authorizationReply(row: ToolCallRow): string | null {
  const approval = row.approval ? (JSON.parse(row.approval) as ToolCallApproval) : null
  if (!approval?.decision) return null
  const who = approval.handle ? `@${approval.handle}` : (approval.principalId ?? 'someone')
  return `${approval.decision === 'approve' ? 'approved' : 'denied'} by ${who}: ${approval.note ?? ''}`
}

export function remoteWaits(db: Kysely<Database>, settings: RunsConfig): RemoteWaits {
  /** A new call of the task that waits on an operator; the phase waits and the task's clock stops. */
  const open = async (taskId: string, stopLooking: boolean, row: Omit<ToolCallRow, 'id' | 'workspace_id' | 'run_id' | 'phase_run_id' | 'task_id' | 'attempt' | 'position'>) => {
    const task = await db.selectFrom('run_tasks').selectAll().where('id', '=', taskId).executeTakeFirst()
    if (!task || task.state !== 'open') return false
    const call: ToolCallRow = { ...row, id: newId(), workspace_id: task.workspace_id, run_id: task.run_id, phase_run_id: task.phase_run_id, task_id: task.id, attempt: Number(task.attempt), position: 0 }
    return db.transaction().execute((trx) =>
      withLockedRun(trx, settings, task.run_id, null, async (t, run) => {
        const phase = run.phases.find((p) => p.id === task.phase_run_id)
        const state = await trx.selectFrom('run_tasks').select('state').where('id', '=', task.id).executeTakeFirst()
        if (!phase || state?.state !== 'open' || phase.status !== 'running') return false
        call.position = (await callsOfTask(trx, task.id)).length
        await markRouteCalls(trx, run.id)
        await trx.insertInto('tool_calls').values(call).execute()
        await recordToolCallEvent(trx, call, run.streamId, 'tool_call.created', t.traceparent)
        const status = waitingStatus(await callsOfTask(trx, task.id))
        if (status) {
          const before = snapshotOf(run)
          phase.status = status
          run.status = 'waiting'
          await persistRun(t, run, 'tool_wait', before)
          await pauseClock(trx, task.id, { stopLooking })
        }
        return true
      }),
    ).then((done) => done === true)
  }

  /** Settles an authorization call `succeeded` (its reply, or none) on the locked run; an open one ends its wait. */
  const settleAuthorization = async (trx: Kysely<Database>, taskId: string, callId: string, output: string) => {
    const task = await trx.selectFrom('run_tasks').select(['run_id', 'phase_run_id']).where('id', '=', taskId).executeTakeFirst()
    if (!task) return
    await withLockedRun(trx, settings, task.run_id, null, async (t, run) => {
      const row = await trx.selectFrom('tool_calls').selectAll().where('id', '=', callId).executeTakeFirst()
      if (!row || (row.status !== 'running' && row.status !== 'awaiting_approval')) return
      const wasWaiting = row.status === 'awaiting_approval'
      const updated = await updateCall(trx, callId, { status: 'succeeded', output, finished_at: now() })
      await recordToolCallEvent(trx, updated, run.streamId, 'tool_call.updated', t.traceparent)
      const phase = run.phases.find((p) => p.id === task.phase_run_id)
      if (wasWaiting && phase) await resumeIfSettled(t, run, phase, taskId)
    })
  }

  return {
    async question(taskId) {
      const row = await latestCall(db, taskId, ASK_OPERATOR)
      if (!row) return null
      if (row.status === 'running' && row.finished_at === null) return { open: true }
      if (isRelayed(row.id, await relayedUpTo(db, taskId))) return null
      return { answer: row.status === 'succeeded' ? (row.output ?? '') : NO_ANSWER, callId: row.id }
    },
    async authorization(taskId) {
      const row = await latestCall(db, taskId, A2A_AUTHORIZE)
      if (!row) return null
      if (row.status === 'awaiting_approval') return { open: true }
      if (isRelayed(row.id, await relayedUpTo(db, taskId))) return null
      const reply = authorizationReply(row)
      return reply === null ? null : { answer: reply, callId: row.id }
    },
    async relayed(taskId, callId, reply) {
      await db.transaction().execute(async (trx) => {
        await trx.updateTable('a2a_remote_tasks').set({ relayed_call_id: callId }).where('task_id', '=', taskId).execute()
        if (reply !== undefined) await settleAuthorization(trx, taskId, callId, reply)
      })
    },
    async movedOn(taskId) {
      const row = await latestCall(db, taskId, A2A_AUTHORIZE)
      if (!row || isRelayed(row.id, await relayedUpTo(db, taskId))) return
      if (row.status !== 'awaiting_approval' && row.status !== 'running') return
      await db.transaction().execute(async (trx) => {
        await trx.updateTable('a2a_remote_tasks').set({ relayed_call_id: row.id }).where('task_id', '=', taskId).execute()
        await settleAuthorization(trx, taskId, row.id, authorizationReply(row) ?? 'undecided: the remote agent moved on')
      })
    },
    async ask(taskId, question) {
      const at = now()
      return open(taskId, true, {
        step: 0, model_call_id: '', name: ASK_OPERATOR, input: JSON.stringify({ question: question || 'The remote agent asks for input.' }),
        output: null, error: null, status: 'running', approval: null, loop_state: null, dispatched_at: null, started_at: at, finished_at: null,
      })
    },
    async authorize(taskId, message) {
      const at = now()
      const approval: ToolCallApproval = { required: true, decision: null, note: null, principalId: null, handle: null, at: null }
      return open(taskId, false, {
        step: 0, model_call_id: '', name: A2A_AUTHORIZE, input: JSON.stringify({ message: message || 'The remote agent asks for an authorization.' }),
        output: null, error: null, status: 'awaiting_approval', approval: JSON.stringify(approval), loop_state: null, dispatched_at: null, started_at: at, finished_at: null,
      })
    },
  }
}
