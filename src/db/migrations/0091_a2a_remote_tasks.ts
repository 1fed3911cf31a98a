// a2a_remote_tasks: a phase's task handed to a remote A2A agent (src/a2a/client.ts). The row is written and
// committed before the message is sent, so that a retry or a restart never sends it again: it follows the remote
// task by its id, or, when the send's outcome is unknown, fails the attempt rather than send twice. relayed_call_id:
// the last operator's answer to a remote question already sent back. Frozen once landed.
import type { Kysely } from 'kysely'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('a2a_remote_tasks')
    .addColumn('task_id', 'text', (c) => c.primaryKey())
    .addColumn('endpoint_url', 'text', (c) => c.notNull())
    .addColumn('remote_task_id', 'text')
    .addColumn('remote_context_id', 'text')
    .addColumn('sent_at', 'text', (c) => c.notNull())
    .addColumn('canceled_at', 'text')
    .addColumn('relayed_call_id', 'text')
    .execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('a2a_remote_tasks').execute()
}
