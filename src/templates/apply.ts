// Creating an agent from a template (docs/agents-templates-assets.md, "Templates"): every field the request leaves out comes from the
// template its templateId names, `capabilities` field by field; the request's own fields win and the agent keeps
// its templateId. A templateId that names no template (in this workspace, or built in) fills nothing.
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import type { CreateAgentBody } from '../agents/schemas.js'
import { findTemplate } from './store.js'

export async function fillFromTemplate(db: Kysely<Database>, workspaceId: string, body: CreateAgentBody): Promise<CreateAgentBody> {
  if (body.templateId === undefined) return body
  const template = await findTemplate(db, workspaceId, body.templateId)
  if (!template) return body
  const { capabilities: fromTemplate, ...fields } = template.agent
  const capabilities = fromTemplate || body.capabilities ? { ...fromTemplate, ...body.capabilities } : undefined
  return { ...fields, ...body, ...(capabilities ? { capabilities } : {}) }
}
