// A task's history and last change, kept as the run changes (docs/a2a.md "History"): the run engine calls
// noteTaskChange in the transaction of every change of a run started over A2A. The task's row gets the time of the
// change; when the task's status (its state and status text) differs from the one last recorded, the status
// message joins the history (a2a_task_messages, role `agent`), at most MAX_HISTORY of them per task (the oldest go).
import { TaskState } from '@a2a-js/sdk'
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { newId, now } from '../ids.js'
import type { Run } from '../runs/schemas.js'
import { MAX_HISTORY, readContext, stateOf } from './task-view.js'

export const statusKeyOf = (state: TaskState, text: string | null) => `${TaskState[state]}|${text ?? ''}`

/** Records the run's change on its A2A task (nothing for other runs, or before the task's row exists). */
export async function noteTaskChange(db: Kysely<Database>, run: Run): Promise<void> {
  if (run.trigger.kind !== 'a2a') return
  const task = await db.selectFrom('a2a_tasks').select(['principal_id', 'status_key']).where('run_id', '=', run.id).executeTakeFirst()
  if (!task) return
  const at = now()
  const { state, text, meta } = stateOf(run, await readContext(db, run, task.principal_id, { messages: false }))
  const key = statusKeyOf(state, text)
  if (key === task.status_key) {
    await db.updateTable('a2a_tasks').set({ updated_at: at }).where('run_id', '=', run.id).execute()
    return
  }
  await db.updateTable('a2a_tasks').set({ updated_at: at, status_key: key }).where('run_id', '=', run.id).execute()
  if (text === null) return
  const id = newId()
  await db.insertInto('a2a_task_messages').values({
    id, run_id: run.id, message_id: id, role: 'agent', text, created_at: at, state: TaskState[state], meta: JSON.stringify(meta),
  }).execute()
  const older = await db.selectFrom('a2a_task_messages').select('id')
    .where('run_id', '=', run.id).where('role', '=', 'agent')
    .orderBy('id', 'desc').limit(MAX_HISTORY).offset(MAX_HISTORY).execute()
  if (older.length > 0) await db.deleteFrom('a2a_task_messages').where('id', 'in', older.map((r) => r.id)).execute()
}
