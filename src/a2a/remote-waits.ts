// A remote A2A task that asks for input (INPUT_REQUIRED) becomes Tandem's own question wait: a
// `tandem.ask_operator` call of the phase's task (the task tool route's kind, step 0), so the phase awaits input and
// the question is in the inbox of its pool. Once answered (or expired), the answer is sent back on the same remote
// task, once: the call's id is recorded as relayed.
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import type { RunsConfig } from '../config.js'
import { newId, now } from '../ids.js'
import { withLockedRun } from '../runs/locked.js'
import { persistRun } from '../runs/machine.js'
import { markRouteCalls } from '../runs/store.js'
import { snapshotOf } from '../runs/transitions.js'
import { callsOfTask, recordToolCallEvent, type ToolCallRow } from '../runs/tool-calls.js'
import { ASK_OPERATOR, waitingStatus } from '../waits/kinds.js'
import { NO_ANSWER } from '../waits/question.js'
import { pauseClock } from './remote-clock.js'

export type QuestionState = { open: true } | { answer: string; callId: string } | null

export interface RemoteWaits {
  /** The task's question: still open, answered and not yet sent back, or none. */
  question(taskId: string): Promise<QuestionState>
  /** Asks the phase's pool (a new wait); false when the task is no longer open. */
  ask(taskId: string, question: string): Promise<boolean>
  relayed(taskId: string, callId: string): Promise<void>
}

export function remoteWaits(db: Kysely<Database>, settings: RunsConfig): RemoteWaits {
  return {
    async question(taskId) {
      const row = await db.selectFrom('tool_calls').select(['id', 'status', 'output', 'finished_at'])
        .where('task_id', '=', taskId).where('name', '=', ASK_OPERATOR).where('step', '=', 0)
        .orderBy('id', 'desc').executeTakeFirst()
      if (!row) return null
      if (row.status === 'running' && row.finished_at === null) return { open: true }
      const ledger = await db.selectFrom('a2a_remote_tasks').select('relayed_call_id').where('task_id', '=', taskId).executeTakeFirst()
      if (ledger?.relayed_call_id === row.id) return null
      return { answer: row.status === 'succeeded' ? (row.output ?? '') : NO_ANSWER, callId: row.id }
    },
    async relayed(taskId, callId) {
      await db.updateTable('a2a_remote_tasks').set({ relayed_call_id: callId }).where('task_id', '=', taskId).execute()
    },
    async ask(taskId, question) {
      const task = await db.selectFrom('run_tasks').selectAll().where('id', '=', taskId).executeTakeFirst()
      if (!task || task.state !== 'open') return false
      const at = now()
      const row: ToolCallRow = {
        id: newId(), workspace_id: task.workspace_id, run_id: task.run_id, phase_run_id: task.phase_run_id, task_id: task.id, attempt: Number(task.attempt),
        step: 0, position: 0, model_call_id: '', name: ASK_OPERATOR, input: JSON.stringify({ question: question || 'The remote agent asks for input.' }),
        output: null, error: null, status: 'running', approval: null, loop_state: null, dispatched_at: null, started_at: at, finished_at: null,
      }
      return db.transaction().execute((trx) =>
        withLockedRun(trx, settings, task.run_id, null, async (t, run) => {
          const phase = run.phases.find((p) => p.id === task.phase_run_id)
          const open = await trx.selectFrom('run_tasks').select('state').where('id', '=', task.id).executeTakeFirst()
          if (!phase || open?.state !== 'open' || phase.status !== 'running') return false
          row.position = (await callsOfTask(trx, task.id)).length
          await markRouteCalls(trx, run.id)
          await trx.insertInto('tool_calls').values(row).execute()
          await recordToolCallEvent(trx, row, run.streamId, 'tool_call.created', t.traceparent)
          const status = waitingStatus(await callsOfTask(trx, task.id))
          if (status) {
            const before = snapshotOf(run)
            phase.status = status
            run.status = 'waiting'
            await persistRun(t, run, 'tool_wait', before)
            await pauseClock(trx, task.id)
          }
          return true
        }),
      ).then((done) => done === true)
    },
  }
}
