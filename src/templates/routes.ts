// /api/agent-templates: the built-in templates (read-only) and the workspace's own (admins write, members read).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { Page, PageQuery, ProblemResponses } from '../http/schemas.js'
import { normaliseName } from '../http/names.js'
import { decodeCursor, toPage } from '../http/pagination.js'
import { AppError, notFound } from '../http/problem.js'
import { AgentTemplate, CreateTemplateBody, SLUG_PATTERN, TemplateParams, UpdateTemplateBody } from './schemas.js'
import { BUILTIN_PREFIX, deleteTemplate, findTemplate, insertTemplate, listTemplates, updateTemplate } from './store.js'

const ADMIN_ONLY = 'create, change or delete agent templates'
const TEMPLATE_KEY = new RegExp(`^(?:${BUILTIN_PREFIX})?${SLUG_PATTERN.slice(1, -1)}$`)

function refuseBuiltin(id: string): void {
  if (id.startsWith(BUILTIN_PREFIX)) throw new AppError('forbidden', `${id} is a built-in template and cannot be changed; create a workspace template from its fields instead.`)
}

export const templateRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.database

  app.post(
    '/agent-templates',
    {
      config: { idempotent: true, adminOnly: ADMIN_ONLY },
      preValidation: normaliseName,
      schema: {
        tags: ['agent-templates'],
        operationId: 'createAgentTemplate', summary: 'Create a workspace agent template (admins)',
        description: '`id` is a slug, unique in the workspace (409 when taken); `agent` holds any agent field but `name` and `templateId`.',
        body: CreateTemplateBody,
        response: { 201: AgentTemplate, ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const template = await reply.withTransaction(async (trx) => {
        const template = await insertTemplate(trx, request.principal.workspaceId, request.body)
        if (!template) throw new AppError('conflict', `The workspace already has a template with the id ${request.body.id}.`, [{ pointer: '/id', detail: 'is taken in this workspace' }])
        reply.code(201).header('location', `/api/agent-templates/${template.id}`)
        return template
      })
      return reply.send(template)
    },
  )

  app.get(
    '/agent-templates',
    {
      schema: {
        tags: ['agent-templates'], operationId: 'listAgentTemplates', summary: 'List the built-in templates, then the workspace\'s by id',
        querystring: PageQuery, response: { 200: Page(AgentTemplate), ...ProblemResponses },
      },
    },
    async (request) => {
      const limit = request.query.limit ?? 50
      const after = decodeCursor(request.query.cursor, (key) => TEMPLATE_KEY.test(key))
      return toPage(await listTemplates(db, request.principal.workspaceId, limit, after), limit)
    },
  )

  app.get(
    '/agent-templates/:id',
    { schema: { tags: ['agent-templates'], operationId: 'getAgentTemplate', summary: 'Read an agent template', params: TemplateParams, response: { 200: AgentTemplate, ...ProblemResponses } } },
    async (request) => {
      const template = await findTemplate(db, request.principal.workspaceId, request.params.id)
      if (!template) throw notFound('Agent template')
      return template
    },
  )

  app.patch(
    '/agent-templates/:id',
    {
      config: { adminOnly: ADMIN_ONLY },
      preValidation: normaliseName,
      schema: {
        tags: ['agent-templates'],
        operationId: 'updateAgentTemplate', summary: 'Update a workspace agent template (admins)',
        description: 'Any of `name`, `description`, `agent`; `agent` replaces the template\'s agent fields whole. Built-in templates are 403.',
        params: TemplateParams,
        body: UpdateTemplateBody,
        response: { 200: AgentTemplate, ...ProblemResponses },
      },
    },
    async (request) => {
      refuseBuiltin(request.params.id)
      const template = await updateTemplate(db, request.principal.workspaceId, request.params.id, request.body)
      if (!template) throw notFound('Agent template')
      return template
    },
  )

  app.delete(
    '/agent-templates/:id',
    {
      config: { adminOnly: ADMIN_ONLY },
      schema: {
        tags: ['agent-templates'], operationId: 'deleteAgentTemplate', summary: 'Delete a workspace agent template (admins)',
        description: 'Agents created from it keep their fields and their templateId. Built-in templates are 403.',
        params: TemplateParams, response: { 204: Type.Null({ description: 'Deleted; no body' }), ...ProblemResponses },
      },
    },
    async (request, reply) => {
      refuseBuiltin(request.params.id)
      if (!(await deleteTemplate(db, request.principal.workspaceId, request.params.id))) throw notFound('Agent template')
      return reply.code(204).send(null)
    },
  )
}
