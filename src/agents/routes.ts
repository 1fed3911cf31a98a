// /api/agents: create, list, read, update and delete agents of the caller's workspace (writes: admins only).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { IdParams, Page, PageQuery, ProblemResponses, sendJsonText } from '../http/schemas.js'
import { normaliseName } from '../http/names.js'
import { decodeCursor, toPage } from '../http/pagination.js'
import { notFound } from '../http/problem.js'
import { Agent, CreateAgentBody, UpdateAgentBody } from './schemas.js'
import { deleteAgent, findAgentJson, insertAgent, listAgentJson, updateAgent } from './store.js'
import { fillFromTemplate } from '../templates/apply.js'

// An agent carries a credential to its endpoint: a member must not be able to redirect it (docs/runs-and-events.md).
const ADMIN_ONLY = 'create, change or delete agents'

export interface AgentRouteOptions {
  /** Told after an agent's change or deletion commits, so that what others derived from its words (the drafter's index) is dropped. */
  onAgentChanged?: (agentId: string) => void
}

export const agentRoutes: FastifyPluginAsyncTypebox<AgentRouteOptions> = async (app, { onAgentChanged = () => {} }) => {
  const { db } = app.database

  app.post(
    '/agents',
    {
      config: { idempotent: true, adminOnly: ADMIN_ONLY },
      preValidation: normaliseName,
      schema: {
        tags: ['agents'],
        operationId: 'createAgent', summary: 'Create an agent',
        description: 'With a `templateId` that names a template (built-in or the workspace\'s), every field the body leaves out comes from the template (`capabilities` field by field); the body\'s fields win and the agent keeps its templateId.',
        body: CreateAgentBody,
        response: { 201: Agent, ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const agent = await reply.withTransaction(async (trx) => {
        const body = await fillFromTemplate(trx, request.principal.workspaceId, request.body)
        const agent = await insertAgent(trx, request.principal.workspaceId, body)
        reply.code(201).header('location', `/api/agents/${agent.id}`)
        return agent
      })
      return reply.send(agent)
    },
  )

  app.get(
    '/agents',
    {
      schema: { tags: ['agents'], operationId: 'listAgents', summary: 'List agents, oldest first', querystring: PageQuery, response: { 200: Page(Agent), ...ProblemResponses } },
    },
    // Pages are assembled from each agent's JSON text (kept per row and version: json-cache.ts); the crud test
    // checks them against the schema.
    async (request, reply) => {
      const limit = request.query.limit ?? 50
      const items = await listAgentJson(db, request.principal.workspaceId, limit + 1, decodeCursor(request.query.cursor))
      const { data, nextCursor } = toPage(items, limit)
      return sendJsonText(reply, `{"data":[${data.map((item) => item.json).join(',')}],"nextCursor":${JSON.stringify(nextCursor)}}`)
    },
  )

  app.get(
    '/agents/:id',
    { schema: { tags: ['agents'], operationId: 'getAgent', summary: 'Read an agent', params: IdParams, response: { 200: Agent, ...ProblemResponses } } },
    async (request, reply) => {
      const json = await findAgentJson(db, request.principal.workspaceId, request.params.id)
      if (json === undefined) throw notFound('Agent')
      return sendJsonText(reply, json)
    },
  )

  app.patch(
    '/agents/:id',
    {
      config: { adminOnly: ADMIN_ONLY },
      preValidation: normaliseName,
      schema: {
        tags: ['agents'],
        operationId: 'updateAgent', summary: 'Update an agent',
        description: 'Any subset of the create fields. `null` clears authMode, avatarAssetId, credentialId, instructions, templateId and endpointUrl; `capabilities` merges field by field; `config` is replaced whole.',
        params: IdParams,
        body: UpdateAgentBody,
        response: { 200: Agent, ...ProblemResponses },
      },
    },
    async (request) => {
      const agent = await updateAgent(db, request.principal.workspaceId, request.params.id, request.body)
      if (!agent) throw notFound('Agent')
      onAgentChanged(agent.id)
      return agent
    },
  )

  app.delete(
    '/agents/:id',
    { config: { adminOnly: ADMIN_ONLY }, schema: { tags: ['agents'], operationId: 'deleteAgent', summary: 'Delete an agent', params: IdParams, response: { 204: Type.Null({ description: 'Deleted; no body' }), ...ProblemResponses } } },
    async (request, reply) => {
      const deleted = await deleteAgent(db, request.principal.workspaceId, request.params.id)
      if (!deleted) throw notFound('Agent')
      onAgentChanged(request.params.id)
      return reply.code(204).send(null)
    },
  )
}
