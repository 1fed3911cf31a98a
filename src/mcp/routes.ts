// /api/mcp-servers: the workspace's MCP servers (admins write, members read) and the live list of a server's tools.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { IdParams, Page, PageQuery, ProblemResponses } from '../http/schemas.js'
import { decodeCursor, toPage } from '../http/pagination.js'
import { AppError, notFound } from '../http/problem.js'
import { approvalOf } from './approval.js'
import { listMcpTools, McpUnreachableError } from './client.js'
import { CreateMcpServerBody, McpServer, McpToolList, UpdateMcpServerBody } from './schemas.js'
import { deleteMcpServer, findMcpServer, insertMcpServer, listMcpServers, updateMcpServer } from './store.js'

const ADMIN_ONLY = 'register, change or delete MCP servers'
const nameTaken = (name: string) => new AppError('name-taken', `The workspace already has an MCP server named ${name}.`, [{ pointer: '/name', detail: 'is taken in this workspace' }])

export const mcpServerRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.database
  const deps = { db, guard: app.egress, timeoutMs: app.config.toolTimeoutMs }

  app.post(
    '/mcp-servers',
    {
      config: { idempotent: true, adminOnly: ADMIN_ONLY },
      schema: {
        tags: ['mcp-servers'], operationId: 'createMcpServer', summary: 'Register an MCP server (admins)',
        description: '`url` is a Streamable HTTP endpoint; it is reached (through the egress guard) only when its tools are listed or called. `credentialId` is sent as `Authorization: Bearer <secret>`.',
        body: CreateMcpServerBody, response: { 201: McpServer, ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const server = await reply.withTransaction(async (trx) => {
        const server = await insertMcpServer(trx, request.principal.workspaceId, request.body)
        if (!server) throw nameTaken(request.body.name)
        reply.code(201).header('location', `/api/mcp-servers/${server.id}`)
        return server
      })
      return reply.send(server)
    },
  )

  app.get(
    '/mcp-servers',
    { schema: { tags: ['mcp-servers'], operationId: 'listMcpServers', summary: 'List the workspace\'s MCP servers, oldest first', querystring: PageQuery, response: { 200: Page(McpServer), ...ProblemResponses } } },
    async (request) => {
      const limit = request.query.limit ?? 50
      return toPage(await listMcpServers(db, request.principal.workspaceId, limit + 1, decodeCursor(request.query.cursor)), limit)
    },
  )

  app.get(
    '/mcp-servers/:id',
    { schema: { tags: ['mcp-servers'], operationId: 'getMcpServer', summary: 'Read an MCP server', params: IdParams, response: { 200: McpServer, ...ProblemResponses } } },
    async (request) => {
      const server = await findMcpServer(db, request.principal.workspaceId, request.params.id)
      if (!server) throw notFound('MCP server')
      return server
    },
  )

  app.get(
    '/mcp-servers/:id/tools',
    {
      schema: {
        tags: ['mcp-servers'], operationId: 'listMcpServerTools', summary: 'List the tools the MCP server offers now',
        description: 'Asks the server (every page of its list, at most 1,000 tools and 4 MiB of answers, within TANDEM_TOOL_TIMEOUT_MS). Each tool carries the approval its server\'s globs give it. A server that is refused by the egress guard, down, slow or not speaking MCP is a 502 `mcp-unreachable`.',
        params: IdParams, response: { 200: McpToolList, ...ProblemResponses },
      },
    },
    async (request) => {
      const workspaceId = request.principal.workspaceId
      const server = await findMcpServer(db, workspaceId, request.params.id)
      if (!server) throw notFound('MCP server')
      try {
        const tools = await listMcpTools(deps, { ...server, workspaceId })
        return { data: tools.map((tool) => ({ ...tool, approval: approvalOf(server.approval, tool.name) })) }
      } catch (error) {
        if (error instanceof McpUnreachableError) throw new AppError('mcp-unreachable', error.message)
        throw error
      }
    },
  )

  app.patch(
    '/mcp-servers/:id',
    {
      config: { adminOnly: ADMIN_ONLY },
      schema: {
        tags: ['mcp-servers'], operationId: 'updateMcpServer', summary: 'Change an MCP server (admins)',
        params: IdParams, body: UpdateMcpServerBody, response: { 200: McpServer, ...ProblemResponses },
      },
    },
    async (request) => {
      const server = await updateMcpServer(db, request.principal.workspaceId, request.params.id, request.body)
      if (server === 'name-taken') throw nameTaken(request.body.name ?? '')
      if (!server) throw notFound('MCP server')
      return server
    },
  )

  app.delete(
    '/mcp-servers/:id',
    {
      config: { adminOnly: ADMIN_ONLY },
      schema: {
        tags: ['mcp-servers'], operationId: 'deleteMcpServer', summary: 'Delete an MCP server (admins)',
        description: 'Agents naming its tools keep their entries; at run time those entries name no tool and become warnings.',
        params: IdParams, response: { 204: Type.Null({ description: 'Deleted; no body' }), ...ProblemResponses },
      },
    },
    async (request, reply) => {
      if (!(await deleteMcpServer(db, request.principal.workspaceId, request.params.id))) throw notFound('MCP server')
      return reply.code(204).send(null)
    },
  )
}
