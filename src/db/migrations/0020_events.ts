// The event log of streams. Frozen: never edit after it lands; add a new migration instead.
// `stream_event_heads` holds each stream's last event id: appending bumps it with an UPDATE … RETURNING
// inside the writer's transaction, whose row lock orders the writers of one stream until they commit, so
// ids become visible in order with no gaps. `purged_through` is the last id retention removed.
import type { Kysely } from 'kysely'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('stream_event_heads')
    .addColumn('stream_id', 'text', (c) => c.primaryKey().references('streams.id'))
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('last_id', 'integer', (c) => c.notNull())
    .addColumn('purged_through', 'integer', (c) => c.notNull().defaultTo(0))
    .execute()

  await db.schema
    .createTable('stream_events')
    .addColumn('stream_id', 'text', (c) => c.notNull().references('streams.id'))
    .addColumn('id', 'integer', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('stream_events_pk', ['stream_id', 'id'])
    .execute()
  await db.schema.createIndex('stream_events_created_at').on('stream_events').column('created_at').execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('stream_events').execute()
  await db.schema.dropTable('stream_event_heads').execute()
}
