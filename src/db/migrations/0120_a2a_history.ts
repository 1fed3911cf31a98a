// A2A task history and order (src/a2a/history.ts): the agent's status messages join the caller's messages in
// a2a_task_messages (role `agent`, with the task state and the status metadata as JSON), and a task's last change
// is kept on its row (`updated_at`, at first its creation) with its status (`status_key`: the TaskState's name and
// the status text), so ListTasks reads the caller's tasks last updated first, filtered by state, with one indexed
// read, and a status is recorded once however often the run changes. Frozen once landed.
import { sql, type Kysely } from 'kysely'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('a2a_task_messages').addColumn('state', 'text').execute()
  await db.schema.alterTable('a2a_task_messages').addColumn('meta', 'text').execute()
  await db.schema.alterTable('a2a_tasks').addColumn('updated_at', 'text').execute()
  await db.schema.alterTable('a2a_tasks').addColumn('status_key', 'text').execute()
  await db.updateTable('a2a_tasks').set({ updated_at: sql`created_at` }).execute()
  await db.schema.createIndex('a2a_tasks_by_update').on('a2a_tasks').columns(['workspace_id', 'cycle_id', 'principal_id', 'updated_at']).execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('a2a_tasks_by_update').execute()
  await db.schema.alterTable('a2a_tasks').dropColumn('status_key').execute()
  await db.schema.alterTable('a2a_tasks').dropColumn('updated_at').execute()
  await db.schema.alterTable('a2a_task_messages').dropColumn('meta').execute()
  await db.schema.alterTable('a2a_task_messages').dropColumn('state').execute()
}
