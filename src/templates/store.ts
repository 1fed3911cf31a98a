// Template storage: the built-in catalogue (read-only, first) and the workspace's own templates (rows of
// `agent_templates`, by slug), always scoped to one workspace.
import type { Expression, Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { prepared } from '../db/prepared.js'
import { now } from '../ids.js'
import { BUILTIN_TEMPLATES, findBuiltinTemplate, type BuiltinTemplate } from './catalogue.js'
import type { AgentTemplate, CreateTemplateBody, UpdateTemplateBody } from './schemas.js'
import type { AgentTemplateTable } from './templates.table.js'

export const BUILTIN_PREFIX = 'builtin:'

const fromBuiltin = (template: BuiltinTemplate): AgentTemplate => ({ ...template, builtin: true, createdAt: null, updatedAt: null })

function toTemplate(row: AgentTemplateTable): AgentTemplate {
  return { id: row.id, name: row.name, description: row.description, builtin: false, agent: JSON.parse(row.agent), createdAt: row.created_at, updatedAt: row.updated_at }
}

// Read by every create of an agent that names a workspace template: compiled once (src/db/prepared.ts).
const selectOne = prepared(2, (db, workspaceId: Expression<string>, id: Expression<string>) =>
  db.selectFrom('agent_templates').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id),
)

export async function findTemplate(db: Kysely<Database>, workspaceId: string, id: string): Promise<AgentTemplate | undefined> {
  if (id.startsWith(BUILTIN_PREFIX)) {
    const builtin = findBuiltinTemplate(id)
    return builtin && fromBuiltin(builtin)
  }
  const [row] = await selectOne(db, workspaceId, id)
  return row && toTemplate(row)
}


/**
 * Up to `limit` templates after the cursor id: the built-in ones in catalogue order, then the workspace's by id.
 * Returns `limit + 1` items when there are more (see toPage).
 */
export async function listTemplates(db: Kysely<Database>, workspaceId: string, limit: number, after?: string): Promise<AgentTemplate[]> {
  const builtins = after === undefined ? BUILTIN_TEMPLATES : after.startsWith(BUILTIN_PREFIX) ? BUILTIN_TEMPLATES.slice(BUILTIN_TEMPLATES.findIndex((t) => t.id === after) + 1) : []
  const page = builtins.slice(0, limit + 1).map(fromBuiltin)
  if (page.length > limit) return page
  let query = db.selectFrom('agent_templates').selectAll().where('workspace_id', '=', workspaceId)
  if (after !== undefined && !after.startsWith(BUILTIN_PREFIX)) query = query.where('id', '>', after)
  const rows = await query.orderBy('id').limit(limit + 1 - page.length).execute()
  return [...page, ...rows.map(toTemplate)]
}

/** The new template, or null when the workspace already has one with this id. */
export async function insertTemplate(db: Kysely<Database>, workspaceId: string, body: CreateTemplateBody): Promise<AgentTemplate | null> {
  const timestamp = now()
  const row: AgentTemplateTable = {
    workspace_id: workspaceId, id: body.id, name: body.name, description: body.description, agent: JSON.stringify(body.agent), created_at: timestamp, updated_at: timestamp,
  }
  const result = await db.insertInto('agent_templates').values(row).onConflict((conflict) => conflict.columns(['workspace_id', 'id']).doNothing()).executeTakeFirst()
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0 ? toTemplate(row) : null
}

/** `agent`, when given, replaces the template's agent fields whole. */
export async function updateTemplate(db: Kysely<Database>, workspaceId: string, id: string, patch: UpdateTemplateBody): Promise<AgentTemplate | undefined> {
  const changes: Partial<AgentTemplateTable> = { updated_at: now() }
  if (patch.name !== undefined) changes.name = patch.name
  if (patch.description !== undefined) changes.description = patch.description
  if (patch.agent !== undefined) changes.agent = JSON.stringify(patch.agent)
  const row = await db.updateTable('agent_templates').set(changes).where('workspace_id', '=', workspaceId).where('id', '=', id).returningAll().executeTakeFirst()
  return row && toTemplate(row)
}

export async function deleteTemplate(db: Kysely<Database>, workspaceId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('agent_templates').where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}
