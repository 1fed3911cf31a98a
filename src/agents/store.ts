// Agent storage: rows of the `agents` table ↔ API agents, always scoped to one workspace.
import type { Kysely, Selectable } from 'kysely'
import type { Database } from '../db/database.js'
import { newId, now } from '../ids.js'
import type { Agent, CreateAgentBody, UpdateAgentBody } from './schemas.js'

export interface AgentTable {
  id: string
  workspace_id: string
  provider_type: string
  auth_mode: string | null
  name: string
  avatar_asset_id: string | null
  credential_id: string | null
  config: string
  instructions: string | null
  template_id: string | null
  streaming: number
  tools: string
  endpoint_url: string | null
  created_at: string
  updated_at: string
}

type AgentRow = Selectable<AgentTable>

export function toAgent(row: AgentRow): Agent {
  return {
    id: row.id,
    providerType: row.provider_type as Agent['providerType'],
    authMode: row.auth_mode as Agent['authMode'],
    name: row.name,
    avatarAssetId: row.avatar_asset_id,
    credentialId: row.credential_id,
    config: JSON.parse(row.config),
    instructions: row.instructions,
    templateId: row.template_id,
    capabilities: { streaming: row.streaming === 1, tools: JSON.parse(row.tools) },
    endpointUrl: row.endpoint_url,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

const lower = (id: string | null | undefined) => (id == null ? id : id.toLowerCase())

export async function insertAgent(db: Kysely<Database>, workspaceId: string, body: CreateAgentBody): Promise<Agent> {
  const timestamp = now()
  const row: AgentRow = {
    id: newId(),
    workspace_id: workspaceId,
    provider_type: body.providerType ?? 'custom_webhook',
    auth_mode: body.authMode ?? null,
    name: body.name,
    avatar_asset_id: lower(body.avatarAssetId) ?? null,
    credential_id: lower(body.credentialId) ?? null,
    config: JSON.stringify(body.config ?? {}),
    instructions: body.instructions ?? null,
    template_id: body.templateId ?? null,
    streaming: body.capabilities?.streaming ? 1 : 0,
    tools: JSON.stringify(body.capabilities?.tools ?? []),
    endpoint_url: body.endpointUrl ?? null,
    created_at: timestamp,
    updated_at: timestamp,
  }
  await db.insertInto('agents').values(row).execute()
  return toAgent(row)
}

export async function findAgent(db: Kysely<Database>, workspaceId: string, id: string): Promise<Agent | undefined> {
  const row = await db.selectFrom('agents').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId).executeTakeFirst()
  return row && toAgent(row)
}

/** Up to `limit` agents after the cursor id, oldest first (ids are time-ordered). */
export async function listAgents(db: Kysely<Database>, workspaceId: string, limit: number, after?: string): Promise<Agent[]> {
  let query = db.selectFrom('agents').selectAll().where('workspace_id', '=', workspaceId)
  if (after) query = query.where('id', '>', after)
  const rows = await query.orderBy('id').limit(limit).execute()
  return rows.map(toAgent)
}

/** Every agent of a workspace, for the drafter's assignment step. */
export async function listWorkspaceAgents(db: Kysely<Database>, workspaceId: string): Promise<Agent[]> {
  const rows = await db.selectFrom('agents').selectAll().where('workspace_id', '=', workspaceId).orderBy('id').execute()
  return rows.map(toAgent)
}

/** Applies a partial update in one statement: `capabilities` merges field by field, `config` is replaced. */
export async function updateAgent(db: Kysely<Database>, workspaceId: string, id: string, patch: UpdateAgentBody): Promise<Agent | undefined> {
  const changes: Partial<AgentRow> = { updated_at: now() }
  if (patch.providerType !== undefined) changes.provider_type = patch.providerType
  if (patch.authMode !== undefined) changes.auth_mode = patch.authMode
  if (patch.name !== undefined) changes.name = patch.name
  if (patch.avatarAssetId !== undefined) changes.avatar_asset_id = lower(patch.avatarAssetId)
  if (patch.credentialId !== undefined) changes.credential_id = lower(patch.credentialId)
  if (patch.config !== undefined) changes.config = JSON.stringify(patch.config)
  if (patch.instructions !== undefined) changes.instructions = patch.instructions
  if (patch.templateId !== undefined) changes.template_id = patch.templateId
  if (patch.capabilities?.streaming !== undefined) changes.streaming = patch.capabilities.streaming ? 1 : 0
  if (patch.capabilities?.tools !== undefined) changes.tools = JSON.stringify(patch.capabilities.tools)
  if (patch.endpointUrl !== undefined) changes.endpoint_url = patch.endpointUrl
  const row = await db
    .updateTable('agents')
    .set(changes)
    .where('id', '=', id)
    .where('workspace_id', '=', workspaceId)
    .returningAll()
    .executeTakeFirst()
  return row && toAgent(row)
}

export async function deleteAgent(db: Kysely<Database>, workspaceId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('agents').where('id', '=', id).where('workspace_id', '=', workspaceId).executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}
