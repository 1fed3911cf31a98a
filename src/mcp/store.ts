// MCP server storage, scoped to one workspace; rows become API objects in toMcpServer only.
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { newId, now } from '../ids.js'
import type { McpServerTable } from './mcp-servers.table.js'
import type { CreateMcpServerBody, McpServer, UpdateMcpServerBody } from './schemas.js'

function toMcpServer(row: McpServerTable): McpServer {
  return {
    id: row.id, name: row.name, url: row.url, credentialId: row.credential_id, approval: JSON.parse(row.approval),
    createdAt: row.created_at, updatedAt: row.updated_at,
  }
}

const lower = (id: string | null | undefined) => (typeof id === 'string' ? id.toLowerCase() : id)

/** The new server, or null when the workspace already has a server of that name. */
export async function insertMcpServer(db: Kysely<Database>, workspaceId: string, body: CreateMcpServerBody): Promise<McpServer | null> {
  const at = now()
  const row: McpServerTable = {
    id: newId(), workspace_id: workspaceId, name: body.name, url: body.url, credential_id: lower(body.credentialId) ?? null,
    approval: JSON.stringify(body.approval ?? {}), created_at: at, updated_at: at,
  }
  const result = await db.insertInto('mcp_servers').values(row).onConflict((c) => c.columns(['workspace_id', 'name']).doNothing()).executeTakeFirst()
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0 ? toMcpServer(row) : null
}

export async function findMcpServer(db: Kysely<Database>, workspaceId: string, id: string): Promise<McpServer | undefined> {
  const row = await db.selectFrom('mcp_servers').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id.toLowerCase()).executeTakeFirst()
  return row && toMcpServer(row)
}

export async function findMcpServerByName(db: Kysely<Database>, workspaceId: string, name: string): Promise<McpServer | undefined> {
  const row = await db.selectFrom('mcp_servers').selectAll().where('workspace_id', '=', workspaceId).where('name', '=', name).executeTakeFirst()
  return row && toMcpServer(row)
}

/** Up to `limit` servers after the cursor id, oldest first. */
export async function listMcpServers(db: Kysely<Database>, workspaceId: string, limit: number, after?: string): Promise<McpServer[]> {
  let query = db.selectFrom('mcp_servers').selectAll().where('workspace_id', '=', workspaceId)
  if (after) query = query.where('id', '>', after)
  return (await query.orderBy('id').limit(limit).execute()).map(toMcpServer)
}

/** The updated server; undefined when there is none; 'name-taken' when another server of the workspace has the new name. */
export async function updateMcpServer(db: Kysely<Database>, workspaceId: string, id: string, patch: UpdateMcpServerBody): Promise<McpServer | undefined | 'name-taken'> {
  const key = id.toLowerCase()
  if (patch.name !== undefined) {
    const holder = await db.selectFrom('mcp_servers').select('id').where('workspace_id', '=', workspaceId).where('name', '=', patch.name).executeTakeFirst()
    if (holder && holder.id !== key) return 'name-taken'
  }
  const changes: Partial<McpServerTable> = { updated_at: now() }
  if (patch.name !== undefined) changes.name = patch.name
  if (patch.url !== undefined) changes.url = patch.url
  if (patch.credentialId !== undefined) changes.credential_id = lower(patch.credentialId)
  if (patch.approval !== undefined) changes.approval = JSON.stringify(patch.approval)
  const row = await db.updateTable('mcp_servers').set(changes).where('workspace_id', '=', workspaceId).where('id', '=', key).returningAll().executeTakeFirst()
  return row && toMcpServer(row)
}

export async function deleteMcpServer(db: Kysely<Database>, workspaceId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('mcp_servers').where('workspace_id', '=', workspaceId).where('id', '=', id.toLowerCase()).executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}
