// A version per agent, bumped by every change (issue 15): readers that keep an agent's JSON (src/agents/json-cache.ts)
// check it against the row, on any instance, without reading the whole row. The (workspace, id) index also holds
// the version, so that a page of versions is read from the index alone.
// Frozen once landed.
import type { Kysely } from 'kysely'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('agents').addColumn('version', 'integer', (column) => column.notNull().defaultTo(1)).execute()
  await db.schema.createIndex('agents_workspace_id_version').on('agents').columns(['workspace_id', 'id', 'version']).execute()
  await db.schema.dropIndex('agents_workspace_id').execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('agents_workspace_id').on('agents').columns(['workspace_id', 'id']).execute()
  await db.schema.dropIndex('agents_workspace_id_version').execute()
  await db.schema.alterTable('agents').dropColumn('version').execute()
}
