// The MCP server's sessions (docs/mcp.md): one row per session, so that any instance serves any request of it,
// with the hash of the API key that opened it (another key's request is a 404) and its resource subscriptions;
// and who answered an agent's question (tool_calls.answered_by). Frozen once landed.
import type { Kysely } from 'kysely'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('mcp_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('principal_id', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull())
    .addColumn('protocol_version', 'text', (c) => c.notNull())
    .addColumn('subscriptions', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('mcp_sessions_key_used').on('mcp_sessions').columns(['key_hash', 'last_used_at']).execute()
  // JSON: { principalId, handle, at, via }, or null until an operator answered the question.
  await db.schema.alterTable('tool_calls').addColumn('answered_by', 'text').execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('tool_calls').dropColumn('answered_by').execute()
  await db.schema.dropTable('mcp_sessions').execute()
}
