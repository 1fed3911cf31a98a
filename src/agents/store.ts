// Agent storage: rows of the `agents` table ↔ API agents, always scoped to one workspace.
import { PostgresAdapter, sql, type Expression, type Kysely, type Selectable } from 'kysely'
import { prepared } from '../db/prepared.js'
import { columnsOf } from '../db/columns.js'
import type { Database } from '../db/database.js'
import type { AgentTable } from './agents.table.js'
import { newId, now } from '../ids.js'
import type { Agent, CreateAgentBody, UpdateAgentBody } from './schemas.js'
import { indexAgentForSearch, namedAgentIds, searchAgents, unindexAgentForSearch, type SearchTerm } from './search.js'
import { agentJsonCache, type RowJsonCache } from './json-cache.js'
import { draftingJsonOf, draftingListCache, draftingProfileCache, withDraftingJson, type AgentProfile } from './drafting-cache.js'
import { sqliteDriverOf } from '../db/sqlite-driver.js'

/** Runs `work` in the caller's transaction, or in a new one: an agent and its search entry are written together. */
const together = <T>(db: Kysely<Database>, work: (trx: Kysely<Database>) => Promise<T>): Promise<T> =>
  db.isTransaction ? work(db) : db.transaction().execute(work)


type AgentRow = Selectable<AgentTable>

/** The agent a row holds; `parsed` gives its config and tools when the caller has them as values already (a create). */
export function toAgent(row: AgentRow, parsed?: { config: Agent['config']; tools: string[] }): Agent {
  return {
    id: row.id,
    providerType: row.provider_type as Agent['providerType'],
    authMode: row.auth_mode as Agent['authMode'],
    name: row.name,
    avatarAssetId: row.avatar_asset_id,
    credentialId: row.credential_id,
    config: parsed ? parsed.config : JSON.parse(row.config),
    instructions: row.instructions,
    templateId: row.template_id,
    capabilities: { streaming: row.streaming === 1, tools: parsed ? parsed.tools : JSON.parse(row.tools) },
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
/** Every column of an agent's row, named (a run's start and its deliveries read them). */
export const AGENT_COLUMNS = columnsOf<AgentTable>({
  id: true, workspace_id: true, provider_type: true, auth_mode: true, name: true, avatar_asset_id: true, credential_id: true, config: true, instructions: true,
  template_id: true, streaming: true, tools: true, endpoint_url: true, created_at: true, updated_at: true, version: true,
})
const selectOne = prepared(2, (db, id: Expression<string>, workspaceId: Expression<string>) =>
  db.selectFrom('agents').select(AGENT_COLUMNS).where('id', '=', id).where('workspace_id', '=', workspaceId),
)
// Versions only, for readers of the JSON cache: from the (workspace_id, id, version) index alone for pages.
const selectVersion = prepared(2, (db, id: Expression<string>, workspaceId: Expression<string>) =>
  db.selectFrom('agents').select('version').where('id', '=', id).where('workspace_id', '=', workspaceId),
)
const selectFirstVersions = prepared(2, (db, workspaceId: Expression<string>, limit: Expression<number>) =>
  db.selectFrom('agents').select(['id', 'version']).where('workspace_id', '=', workspaceId).orderBy('id').limit(limit),
)
const selectVersionsAfter = prepared(3, (db, workspaceId: Expression<string>, after: Expression<string>, limit: Expression<number>) =>
  db.selectFrom('agents').select(['id', 'version']).where('workspace_id', '=', workspaceId).where('id', '>', after).orderBy('id').limit(limit),
)

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
    version: 1,
  }
  await together(db, async (trx) => {
    await insertRow(trx, ...(COLUMNS.map((column) => row[column]) as unknown as AgentValues))
    await indexAgentForSearch(trx, row)
  })
  // Without parsing back the JSON just written: the body's values are JSON.
  return toAgent(row as AgentRow, { config: body.config ?? {}, tools: body.capabilities?.tools ?? [] })
}

export async function findAgent(db: Kysely<Database>, workspaceId: string, id: string): Promise<Agent | undefined> {
  const [row] = await selectOne(db, id, workspaceId)
  return row && toAgent(row)
}

/** The agent's JSON text, as GET /api/agents/:id answers it: from the JSON cache when its version is the row's. */
export async function findAgentJson(db: Kysely<Database>, workspaceId: string, id: string): Promise<string | undefined> {
  const cache = agentJsonCache(db)
  if (cache.has(id)) {
    const [current] = await selectVersion(db, id, workspaceId)
    if (!current) return undefined
    const json = cache.get(id, current.version)
    if (json !== undefined) return json
  }
  const [row] = await selectOne(db, id, workspaceId)
  return row && jsonOf(db, cache, row)
}

/**
 * The JSON texts of up to `limit` agents after the cursor id, oldest first (ids are time-ordered): the page's
 * ids and versions are read from the index, and only the rows not in the JSON cache at that version are read
 * whole. An agent deleted between the two reads is left out of the page.
 */
export async function listAgentJson(db: Kysely<Database>, workspaceId: string, limit: number, after?: string): Promise<Array<{ id: string; json: string }>> {
  const cache = agentJsonCache(db)
  const keys = after ? await selectVersionsAfter(db, workspaceId, after, limit) : await selectFirstVersions(db, workspaceId, limit)
  const page: Array<{ id: string; json: string | undefined }> = keys.map((key) => ({ id: key.id, json: cache.get(key.id, key.version) }))
  const missing = page.filter((item) => item.json === undefined).map((item) => item.id)
  if (missing.length > 0) {
    const rows = await db.selectFrom('agents').selectAll().where('workspace_id', '=', workspaceId).where('id', 'in', missing).execute()
    const read = new Map(rows.map((row) => [row.id, row]))
    for (const item of page) {
      const row = item.json === undefined ? read.get(item.id) : undefined
      if (row) item.json = jsonOf(db, cache, row)
    }
  }
  return page.filter((item): item is { id: string; json: string } => item.json !== undefined)
}

/** A row as JSON; kept in the cache when read outside a transaction (a transaction's own writes may yet roll back). */
const jsonOf = (db: Kysely<Database>, cache: RowJsonCache, row: AgentRow) => {
  const json = JSON.stringify(toAgent(row))
  return db.isTransaction ? json : cache.set(row.id, row.version, json)
}

/**
 * A workspace with at most this many agents is drafted over all of them, with no search: reading them is
 * cheaper than the per-step full-text queries (a 494-character prompt over 60 agents: about 1 ms against 14 ms
 * of SQLite time), and the drafter then scores every agent itself, so the outcome is the same.
 */
export const DRAFT_ALL_AGENTS_UP_TO = 200

// Ids and versions from the (workspace_id, id, version) index alone.
const selectAgentVersions = prepared(2, (db, workspaceId: Expression<string>, limit: Expression<number>) =>
  db.selectFrom('agents').select(['id', 'version']).where('workspace_id', '=', workspaceId).orderBy('id').limit(limit),
)

/**
 * Every agent of the workspace (oldest first, only what the drafter reads) when it has at most
 * DRAFT_ALL_AGENTS_UP_TO; else null. On SQLite, outside a transaction, the answer is kept by the database's data
 * mark and given again while the mark is the same (drafting-cache.ts DraftingListCache). Otherwise profiles come
 * from the drafting cache at the row's version (read from the index on every call); the list carries its JSON
 * text (drafting-cache.ts draftingJsonOf).
 */
export async function allDraftingAgentsIfFew(db: Kysely<Database>, workspaceId: string): Promise<readonly AgentProfile[] | null> {
  // Read before the agents: a write landing while they are read changes the mark, so the list is kept under a
  // mark older than what it holds, never newer.
  const mark = db.isTransaction ? undefined : sqliteDriverOf(db)?.dataMark()
  const lists = mark === undefined ? undefined : draftingListCache(db)
  if (mark !== undefined) {
    const kept = lists!.get(workspaceId, mark)
    if (kept !== undefined) return kept
  }
  const agents = await readDraftingAgents(db, workspaceId)
  if (mark !== undefined && (agents === null || draftingJsonOf(agents) !== undefined)) lists!.set(workspaceId, mark, agents)
  return agents
}

async function readDraftingAgents(db: Kysely<Database>, workspaceId: string): Promise<AgentProfile[] | null> {
  const keys = await selectAgentVersions(db, workspaceId, DRAFT_ALL_AGENTS_UP_TO + 1)
  if (keys.length > DRAFT_ALL_AGENTS_UP_TO) return null
  const cache = draftingProfileCache(db)
  const entries = keys.map((key) => cache.get(key.id, key.version))
  const missing = keys.filter((_, i) => entries[i] === undefined).map((key) => key.id)
  if (missing.length > 0) {
    const rows = await db.selectFrom('agents').select(['id', 'name', 'instructions', 'tools', 'version']).where('workspace_id', '=', workspaceId).where('id', 'in', missing).execute()
    const read = new Map(rows.map((row) => [row.id, row]))
    keys.forEach((key, i) => {
      const row = entries[i] === undefined ? read.get(key.id) : undefined
      if (!row) return
      // Kept only when read outside a transaction (a transaction's own writes may yet roll back).
      entries[i] = db.isTransaction ? { version: row.version, profile: toDraftingAgent(row), json: '' } : cache.set(row.id, row.version, toDraftingAgent(row))
    })
  }
  // An agent deleted between the two reads is left out.
  const found = entries.filter((entry) => entry !== undefined)
  const agents = found.map((entry) => entry.profile)
  return found.every((entry) => entry.json !== '') ? withDraftingJson(agents, `[${found.map((entry) => entry.json).join(',')}]`) : agents
}

const toDraftingAgent = (row: DraftingRow): AgentProfile => ({ id: row.id, name: row.name, instructions: row.instructions, tools: JSON.parse(row.tools) as string[] })

/**
 * What the drafter knows of the agents it may assign in a larger workspace: the workspace's agents that the texts of `plan.names`
 * name (search.ts namedAgentIds); for each query of `plan.queries` (one per text the drafter will match agents
 * against, drafter/plan.ts), the workspace's agents it will score best for it (search.ts searchAgents:
 * full-text search, any agent of the workspace can be found); and those of `alsoIds` that are the workspace's
 * (the agents of a cycle being refined) — only what the drafter reads of them.
 */
export async function listDraftingAgents(db: Kysely<Database>, workspaceId: string, plan: { queries: SearchTerm[][]; names: string[][] }, alsoIds: string[] = []) {
  const [named, found] = await Promise.all([namedAgentIds(db, workspaceId, plan.names), searchAgents(db, workspaceId, plan.queries)])
  const ids = [...new Set([...named, ...found, ...alsoIds])]
  if (ids.length === 0) return []
  const { rows } = db.getExecutor().adapter instanceof PostgresAdapter
    ? await sql<DraftingRow>`select id, name, instructions, tools from agents where workspace_id = ${workspaceId} and id = any(array(select jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb)))`.execute(db)
    : await sql<DraftingRow>`select id, name, instructions, tools from agents where workspace_id = ${workspaceId} and id in (select value from json_each(${JSON.stringify(ids)}))`.execute(db)
  const rank = new Map(ids.map((id, i) => [id, i]))
  return rows
    .sort((a, b) => (rank.get(a.id) ?? 0) - (rank.get(b.id) ?? 0))
    .map(toDraftingAgent)
}

interface DraftingRow {
  id: string
  name: string
  instructions: string | null
  tools: string
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
  const row = await together(db, async (trx) => {
    const updated = await trx.updateTable('agents').set((eb) => ({ ...changes, version: eb('version', '+', 1) })).where('id', '=', id).where('workspace_id', '=', workspaceId).returningAll().executeTakeFirst()
    if (updated) await indexAgentForSearch(trx, updated, true)
    return updated
  })
  return row && toAgent(row)
}

export async function deleteAgent(db: Kysely<Database>, workspaceId: string, id: string): Promise<boolean> {
  const deleted = await together(db, async (trx) => {
    const owned = await trx.selectFrom('agents').select('id').where('id', '=', id).where('workspace_id', '=', workspaceId).executeTakeFirst()
    if (!owned) return false
    await unindexAgentForSearch(trx, id)
    const result = await trx.deleteFrom('agents').where('id', '=', id).where('workspace_id', '=', workspaceId).executeTakeFirst()
    return Number(result.numDeletedRows) > 0
  })
  if (deleted) agentJsonCache(db).delete(id)
  return deleted
}
