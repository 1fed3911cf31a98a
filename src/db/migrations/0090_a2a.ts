// A2A (src/a2a): a saved cycle's `a2a` exposure (JSON, null when never set), and one row per task started over
// A2A — the run it is, the cycle and caller it belongs to, and the A2A message id that started it — so that
// GetTask, ListTasks and CancelTask find a task by cycle and caller with one indexed read. The caller's later
// messages on a task (answers, comments) are rows of a2a_task_messages: the task's history. Frozen once landed.
import type { Kysely } from 'kysely'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('cycles').addColumn('a2a', 'text').execute()
  await db.schema
    .createTable('a2a_tasks')
    .addColumn('run_id', 'text', (c) => c.primaryKey().references('runs.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('cycle_id', 'text', (c) => c.notNull())
    .addColumn('stream_id', 'text', (c) => c.notNull())
    .addColumn('principal_id', 'text', (c) => c.notNull())
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('a2a_tasks_by_caller').on('a2a_tasks').columns(['workspace_id', 'cycle_id', 'principal_id', 'created_at']).execute()
  await db.schema
    .createTable('a2a_task_messages')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('run_id', 'text', (c) => c.notNull().references('a2a_tasks.run_id').onDelete('cascade'))
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('a2a_task_messages_by_run').on('a2a_task_messages').columns(['run_id', 'id']).execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('a2a_task_messages').execute()
  await db.schema.dropTable('a2a_tasks').execute()
  await db.schema.alterTable('cycles').dropColumn('a2a').execute()
}
