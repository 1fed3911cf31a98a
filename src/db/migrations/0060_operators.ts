// Operators in the loop (docs/operators.md): what started each run, claims on inbox items, schedules,
// message triggers, inbound hooks and the webhook-ids they have seen. Frozen once landed.
import { PostgresAdapter, sql, type Kysely } from 'kysely'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Every run says what started it; runs from before this migration were started by hand (or by a trigger
  // call, which is "manual" too). `depth` is the message-trigger loop guard.
  await db.schema.alterTable('runs').addColumn('trigger_kind', 'text', (c) => c.notNull().defaultTo('manual')).execute()
  await db.schema.alterTable('runs').addColumn('trigger_id', 'text').execute()
  await db.schema.alterTable('runs').addColumn('depth', 'integer', (c) => c.notNull().defaultTo(0)).execute()
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`update runs set document = (document::jsonb || '{"trigger":{"kind":"manual","id":null},"depth":0}'::jsonb)::text`.execute(db)
  } else {
    await sql`update runs set document = json_set(document, '$.trigger', json('{"kind":"manual","id":null}'), '$.depth', 0)`.execute(db)
  }
  // The inbox reads a workspace's waiting runs.
  await db.schema.createIndex('runs_workspace_status').on('runs').columns(['workspace_id', 'status', 'id']).execute()

  await db.schema
    .createTable('inbox_claims')
    .addColumn('phase_run_id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id').onDelete('cascade'))
    .addColumn('principal_id', 'text', (c) => c.notNull())
    .addColumn('handle', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('schedules')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('stream_id', 'text', (c) => c.notNull().references('streams.id'))
    .addColumn('trigger_name', 'text', (c) => c.notNull())
    .addColumn('cron', 'text', (c) => c.notNull())
    .addColumn('timezone', 'text', (c) => c.notNull())
    .addColumn('input', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    // The tick the schedule's job waits for (null when disabled): a firing moves it on with a compare-and-set.
    .addColumn('next_run_at', 'text')
    .addColumn('last_run_at', 'text')
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('schedules_stream').on('schedules').columns(['stream_id', 'id']).execute()

  await db.schema
    .createTable('message_triggers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('stream_id', 'text', (c) => c.notNull().references('streams.id'))
    .addColumn('trigger_name', 'text', (c) => c.notNull())
    .addColumn('mention', 'text')
    .addColumn('prefix', 'text')
    .addColumn('author_type', 'text')
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('message_triggers_stream').on('message_triggers').columns(['stream_id', 'id']).execute()
  // One matching pass per message, whatever the retries of its job.
  await db.schema
    .createTable('message_trigger_passes')
    .addColumn('message_id', 'text', (c) => c.primaryKey())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('message_trigger_passes_age').on('message_trigger_passes').columns(['created_at']).execute()

  await db.schema
    .createTable('inbound_hooks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('stream_id', 'text', (c) => c.notNull().references('streams.id'))
    .addColumn('trigger_name', 'text', (c) => c.notNull())
    // The whsec_ secret, sealed by the vault (the hook id as associated data; re-sealed by `credentials rekey`).
    .addColumn('secret_key_id', 'text', (c) => c.notNull())
    .addColumn('secret_ciphertext', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('inbound_hooks_stream').on('inbound_hooks').columns(['stream_id', 'id']).execute()
  await db.schema
    .createTable('hook_receipts')
    .addColumn('hook_id', 'text', (c) => c.notNull().references('inbound_hooks.id').onDelete('cascade'))
    .addColumn('webhook_id', 'text', (c) => c.notNull())
    .addColumn('answer', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('hook_receipts_pk', ['hook_id', 'webhook_id'])
    .execute()
  await db.schema.createIndex('hook_receipts_age').on('hook_receipts').columns(['hook_id', 'created_at']).execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['hook_receipts', 'inbound_hooks', 'message_trigger_passes', 'message_triggers', 'schedules', 'inbox_claims']) await db.schema.dropTable(table).execute()
  await db.schema.dropIndex('runs_workspace_status').execute()
  for (const column of ['depth', 'trigger_id', 'trigger_kind']) await db.schema.alterTable('runs').dropColumn(column).execute()
}
