// Streaming answers and usage (docs/streaming-and-usage.md): messages gain `status` (streaming, complete,
// failed; every earlier message is complete), the task whose answer they hold (one message per task, so a
// retried delivery streams into the same one) and the claim whose deltas wrote them (a re-claim resets the
// text); a task records the tokens its answer used. While a message streams its content is rewritten often:
// the revision trigger skips those writes (a streaming message has no revisions). Frozen once landed.
import { PostgresAdapter, sql, type Kysely } from 'kysely'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('messages').addColumn('status', 'text', (c) => c.notNull().defaultTo('complete')).execute()
  await db.schema.alterTable('messages').addColumn('task_id', 'text').execute()
  await db.schema.alterTable('messages').addColumn('stream_key', 'text').execute()
  await db.schema.createIndex('messages_task').unique().on('messages').column('task_id').execute()
  await db.schema.alterTable('run_tasks').addColumn('usage', 'text').execute()
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`drop trigger messages_keep_revision on messages`.execute(db)
    await sql`
      create trigger messages_keep_revision before update of content on messages
      for each row when (old.status <> 'streaming') execute function keep_message_revision()`.execute(db)
    return
  }
  await sql`drop trigger messages_keep_revision`.execute(db)
  await sql`
    create trigger messages_keep_revision before update of content on messages
    for each row when old.status <> 'streaming' begin
      insert into message_revisions (message_id, revision, content, text, created_at)
      values (old.id, old.revision, old.content, old.text, coalesce(old.edited_at, old.created_at));
    end`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter
  await sql`drop trigger messages_keep_revision${postgres ? sql` on messages` : sql``}`.execute(db)
  if (postgres) {
    await sql`create trigger messages_keep_revision before update of content on messages for each row execute function keep_message_revision()`.execute(db)
  } else {
    await sql`
      create trigger messages_keep_revision before update of content on messages
      for each row begin
        insert into message_revisions (message_id, revision, content, text, created_at)
        values (old.id, old.revision, old.content, old.text, coalesce(old.edited_at, old.created_at));
      end`.execute(db)
  }
  await db.schema.dropIndex('messages_task').execute()
  await db.schema.alterTable('run_tasks').dropColumn('usage').execute()
  for (const column of ['stream_key', 'task_id', 'status']) await db.schema.alterTable('messages').dropColumn(column).execute()
}
