// Initial schema. Frozen: never edit after it lands; add a new migration instead.
// Portable types only (text, integer) so that one migration serves SQLite and PostgreSQL.
// Timestamps are ISO 8601 UTC text (sorts as time); JSON is text (keeps the client's key order).
import type { Kysely } from 'kysely'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('workspaces')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('principal_id', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .execute()

  await db.schema
    .createTable('agents')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('provider_type', 'text', (c) => c.notNull())
    .addColumn('auth_mode', 'text')
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('avatar_asset_id', 'text')
    .addColumn('credential_id', 'text')
    .addColumn('config', 'text', (c) => c.notNull())
    .addColumn('instructions', 'text')
    .addColumn('template_id', 'text')
    .addColumn('streaming', 'integer', (c) => c.notNull())
    .addColumn('tools', 'text', (c) => c.notNull())
    .addColumn('endpoint_url', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('agents_workspace_id').on('agents').columns(['workspace_id', 'id']).execute()

  await db.schema
    .createTable('streams')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('streams_workspace_id').on('streams').columns(['workspace_id', 'id']).execute()

  await db.schema
    .createTable('cycles')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('stream_id', 'text', (c) => c.notNull().references('streams.id'))
    .addColumn('trigger_name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('phases', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('cycles_stream_id').on('cycles').columns(['stream_id', 'id']).execute()

  await db.schema
    .createTable('messages')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('stream_id', 'text', (c) => c.notNull().references('streams.id'))
    .addColumn('author_id', 'text', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('revision', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('edited_at', 'text')
    .execute()
  await db.schema.createIndex('messages_stream_id').on('messages').columns(['stream_id', 'id']).execute()

  await db.schema
    .createTable('message_revisions')
    .addColumn('message_id', 'text', (c) => c.notNull().references('messages.id'))
    .addColumn('revision', 'integer', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('message_revisions_pk', ['message_id', 'revision'])
    .execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['message_revisions', 'messages', 'cycles', 'streams', 'agents', 'api_keys', 'workspaces']) {
    await db.schema.dropTable(table).execute()
  }
}
