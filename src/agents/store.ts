// Agent storage: rows of the `agents` table ↔ API agents, always scoped to one workspace.
import type { Expression, Kysely, Selectable } from 'kysely'
import { prepared } from '../db/prepared.js'
import type { Database } from '../db/database.js'
import type { AgentTable } from './agents.table.js'
import { newId, now } from '../ids.js'
import type { Agent, CreateAgentBody, UpdateAgentBody } from './schemas.js'


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

const COLUMNS = [
  'id', 'workspace_id', 'provider_type', 'auth_mode', 'name', 'avatar_asset_id', 'credential_id', 'config', 'instructions',
  'template_id', 'streaming', 'tools', 'endpoint_url', 'created_at', 'updated_at',
] as const satisfies ReadonlyArray<keyof AgentRow>

/** One value per column, in COLUMNS order. */
type ValuesOf<C extends ReadonlyArray<keyof AgentRow>> = { -readonly [K in keyof C]: C[K] extends keyof AgentRow ? AgentRow[C[K]] : never }
type AgentValues = ValuesOf<typeof COLUMNS>

const insertRow = prepared<AgentValues, never>(COLUMNS.length, (db, ...values) =>
  db.insertInto('agents').values(Object.fromEntries(COLUMNS.map((column, i) => [column, values[i]])) as { [K in keyof AgentRow]: Expression<AgentRow[K]> }),
)
const selectOne = prepared(2, (db, id: Expression<string>, workspaceId: Expression<string>) =>
  db.selectFrom('agents').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId),
)
const selectFirstPage = prepared(2, (db, workspaceId: Expression<string>, limit: Expression<number>) =>
  db.selectFrom('agents').selectAll().where('workspace_id', '=', workspaceId).orderBy('id').limit(limit),
)
const selectPageAfter = prepared(3, (db, workspaceId: Expression<string>, after: Expression<string>, limit: Expression<number>) =>
  db.selectFrom('agents').selectAll().where('workspace_id', '=', workspaceId).where('id', '>', after).orderBy('id').limit(limit),
)
const selectForDrafting = prepared(2, (db, workspaceId: Expression<string>, limit: Expression<number>) =>
  db.selectFrom('agents').select(['id', 'name', 'instructions', 'tools']).where('workspace_id', '=', workspaceId).orderBy('id').limit(limit),
)

/** The drafter considers at most this many agents of a workspace (the oldest): its cost grows with them. */
export const MAX_DRAFTING_AGENTS = 500

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
  await insertRow(db, ...(COLUMNS.map((column) => row[column]) as unknown as AgentValues))
  return toAgent(row)
}

export async function findAgent(db: Kysely<Database>, workspaceId: string, id: string): Promise<Agent | undefined> {
  const [row] = await selectOne(db, id, workspaceId)
  return row && toAgent(row)
}

/** Up to `limit` agents after the cursor id, oldest first (ids are time-ordered). */
export async function listAgents(db: Kysely<Database>, workspaceId: string, limit: number, after?: string): Promise<Agent[]> {
  const rows = after ? await selectPageAfter(db, workspaceId, after, limit) : await selectFirstPage(db, workspaceId, limit)
  return rows.map(toAgent)
}

/** What the drafter knows of the agents it may assign: the oldest MAX_DRAFTING_AGENTS of the workspace. */
export async function listDraftingAgents(db: Kysely<Database>, workspaceId: string) {
  const rows = await selectForDrafting(db, workspaceId, MAX_DRAFTING_AGENTS)
  return rows.map((row) => ({ id: row.id, name: row.name, instructions: row.instructions, tools: JSON.parse(row.tools) as string[] }))
}

/** Applies a partial update in one statement: `capabilities` merges field by field, `config` is replaced. */
/** Which of these ids are agents of the workspace. */
export async function existingAgentIds(db: Kysely<Database>, workspaceId: string, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return []
  const rows = await db.selectFrom('agents').select('id').where('workspace_id', '=', workspaceId).where('id', 'in', ids).execute()
  return rows.map((row) => row.id)
}

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
