// The per-workspace bound on schedule firings (src/schedules/rate.ts): one row per workspace and clock minute,
// counting the ticks fired in it; a conditional update takes a firing, so instances never pass the bound
// together. Rows of past minutes are deleted as firings go. And an index for the cap on enabled schedules.
// Frozen once landed.
import type { Kysely } from 'kysely'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('schedule_firings')
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('minute', 'text', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('schedule_firings_pk', ['workspace_id', 'minute'])
    .execute()
  // The cap on a workspace's enabled schedules counts them with this index.
  await db.schema.createIndex('schedules_workspace_enabled').on('schedules').columns(['workspace_id', 'enabled']).execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('schedules_workspace_enabled').execute()
  await db.schema.dropTable('schedule_firings').execute()
}
