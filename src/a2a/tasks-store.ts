// A2A task rows (0090): which runs were started over A2A, on which exposed cycle, by whom; and the caller's
// messages on each task (its history). The run itself is the runs table's: these rows only index it.
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { newId, now } from '../ids.js'

export interface A2aTaskRef {
  runId: string
  workspaceId: string
  cycleId: string
  streamId: string
  principalId: string
  createdAt: string
}

export async function insertTask(db: Kysely<Database>, task: Omit<A2aTaskRef, 'createdAt'> & { messageId: string; text: string }): Promise<void> {
  const at = now()
  await db.insertInto('a2a_tasks').values({
    run_id: task.runId, workspace_id: task.workspaceId, cycle_id: task.cycleId, stream_id: task.streamId,
    principal_id: task.principalId, message_id: task.messageId, created_at: at, updated_at: at, status_key: null,
  }).execute()
  await recordUserMessage(db, task.runId, task.messageId, task.text)
}

export async function recordUserMessage(db: Kysely<Database>, runId: string, messageId: string, text: string): Promise<void> {
  const at = now()
  await db.insertInto('a2a_task_messages').values({ id: newId(), run_id: runId, message_id: messageId, role: 'user', text, created_at: at, state: null, meta: null }).execute()
  await db.updateTable('a2a_tasks').set({ updated_at: at }).where('run_id', '=', runId).execute()
}

/** The task of this workspace and cycle, or undefined (another workspace's or cycle's task reads as unknown). */
export async function findTask(db: Kysely<Database>, workspaceId: string, cycleId: string, runId: string): Promise<A2aTaskRef | undefined> {
  const row = await db
    .selectFrom('a2a_tasks').selectAll()
    .where('run_id', '=', runId.toLowerCase()).where('workspace_id', '=', workspaceId).where('cycle_id', '=', cycleId)
    .executeTakeFirst()
  return row && { runId: row.run_id, workspaceId: row.workspace_id, cycleId: row.cycle_id, streamId: row.stream_id, principalId: row.principal_id, createdAt: row.created_at }
}

/** The filter of ListTasks: the caller's tasks of the cycle; `states` TaskState names; `after` the last row of the previous page. */
export interface TaskFilter {
  workspaceId: string
  cycleId: string
  principalId: string
  states: string[] | null
  updatedAfter: string | null
}

function filtered(db: Kysely<Database>, filter: TaskFilter) {
  let query = db
    .selectFrom('a2a_tasks')
    .where('a2a_tasks.workspace_id', '=', filter.workspaceId)
    .where('a2a_tasks.cycle_id', '=', filter.cycleId)
    .where('a2a_tasks.principal_id', '=', filter.principalId)
  const states = filter.states
  if (states) query = query.where((eb) => eb.or(states.map((state) => eb('a2a_tasks.status_key', 'like', `${state}|%`))))
  if (filter.updatedAfter) query = query.where('a2a_tasks.updated_at', '>', filter.updatedAfter)
  return query
}

/** The caller's tasks of the cycle, last updated first (then by id, descending). */
export async function listTasks(
  db: Kysely<Database>,
  filter: TaskFilter & { after: { updatedAt: string; runId: string } | null; limit: number },
): Promise<Array<A2aTaskRef & { updatedAt: string }>> {
  let query = filtered(db, filter)
    .select(['a2a_tasks.run_id', 'a2a_tasks.workspace_id', 'a2a_tasks.cycle_id', 'a2a_tasks.stream_id', 'a2a_tasks.principal_id', 'a2a_tasks.created_at', 'a2a_tasks.updated_at'])
  const after = filter.after
  if (after) {
    query = query.where((eb) => eb.or([
      eb('a2a_tasks.updated_at', '<', after.updatedAt),
      eb.and([eb('a2a_tasks.updated_at', '=', after.updatedAt), eb('a2a_tasks.run_id', '<', after.runId)]),
    ]))
  }
  const rows = await query.orderBy('a2a_tasks.updated_at', 'desc').orderBy('a2a_tasks.run_id', 'desc').limit(filter.limit).execute()
  return rows.map((row) => ({
    runId: row.run_id, workspaceId: row.workspace_id, cycleId: row.cycle_id, streamId: row.stream_id, principalId: row.principal_id,
    createdAt: row.created_at, updatedAt: row.updated_at ?? row.created_at,
  }))
}

/** How many tasks the filter finds (all pages). */
export async function countTasks(db: Kysely<Database>, filter: TaskFilter): Promise<number> {
  const row = await filtered(db, filter).select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirst()
  return Number(row?.n ?? 0)
}
