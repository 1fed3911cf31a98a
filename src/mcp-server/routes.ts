// /mcp: Tandem as an MCP server over Streamable HTTP (docs/mcp.md). POST carries JSON-RPC messages (answered as
// JSON), GET is the session's stream of notifications, DELETE ends the session. The same API keys, roles and rate
// limits as /api (agent keys 403); a request from a browser page of another origin is refused (DNS rebinding).
// The session lives in the database: each request builds its own SDK server and transport for it.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyRateLimitStoreCtor } from '@fastify/rate-limit'
import { authentication } from '../principals/auth.js'
import { rateLimits } from '../http/rate-limit.js'
import { AppError } from '../http/problem.js'
import { openEventStream } from '../http/event-stream.js'
import { endSession, findSession, keyHashOf, openSession, type McpSession } from './sessions.js'
import { NotificationStream } from './notifications.js'

/** Headers of the client's request the SDK's transport reads. */
const PASSED_HEADERS = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id']

function sameOrigin(request: FastifyRequest, allowed: string[] | null): boolean {
  const origin = request.headers.origin
  if (origin === undefined) return true
  if (allowed?.includes('*') || allowed?.includes(origin)) return true
  try {
    return new URL(origin).host.toLowerCase() === (request.headers.host ?? '').toLowerCase()
  } catch {
    return false
  }
}

async function sessionOf(request: FastifyRequest): Promise<McpSession> {
  const id = request.headers['mcp-session-id']
  if (typeof id !== 'string' || id === '') throw new AppError('validation-error', 'Send the Mcp-Session-Id header that initialize answered.', [{ pointer: '/headers/mcp-session-id', detail: 'is required' }])
  const session = await findSession(request.server.database.db, id, keyHashOf(request.headers.authorization), request.server.config.mcpSessionIdleMs)
  if (!session) throw new AppError('not-found', 'The MCP session does not exist, has ended, or belongs to another key: initialize again.')
  return session
}

/** The SDK and the tool server, loaded at the first /mcp call rather than at start-up (they are most of a cold start's modules). */
const loadMcpServer = async () => {
  const [{ WebStandardStreamableHTTPServerTransport }, { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS }, { createMcpServer }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
    import('./server.js'),
  ])
  return { WebStandardStreamableHTTPServerTransport, LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS, createMcpServer }
}

async function answerPost(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const app = request.server
  const { WebStandardStreamableHTTPServerTransport, LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS, createMcpServer } = await loadMcpServer()
  const body = request.body as { method?: unknown; params?: { protocolVersion?: unknown } } | unknown[]
  const initialize = !Array.isArray(body) && typeof body === 'object' && body !== null && body.method === 'initialize'
  let session: McpSession | null = null
  if (initialize) {
    const asked = (body as { params?: { protocolVersion?: unknown } }).params?.protocolVersion
    const protocolVersion = typeof asked === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(asked) ? asked : LATEST_PROTOCOL_VERSION
    const { workspaceId, principalId } = request.principal
    const id = await openSession(app.database.db, { workspaceId, principalId, keyHash: keyHashOf(request.headers.authorization), protocolVersion })
    session = { id, workspaceId, principalId, protocolVersion, subscriptions: [], lastUsedAt: new Date().toISOString() }
    reply.header('mcp-session-id', id)
  } else session = await sessionOf(request)

  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
  const server = createMcpServer({ app, request, session })
  await server.connect(transport)
  try {
    const headers = new Headers()
    for (const name of PASSED_HEADERS) {
      const value = request.headers[name]
      if (typeof value === 'string') headers.set(name, value)
    }
    const webRequest = new Request(`http://localhost${request.url}`, { method: 'POST', headers, body: JSON.stringify(body) })
    const response = await transport.handleRequest(webRequest, { parsedBody: body })
    const text = await response.text()
    const type = response.headers.get('content-type')
    if (type) reply.type(type)
    return reply.code(response.status).send(text === '' ? null : text)
  } finally {
    await server.close()
  }
}

async function routes(app: FastifyInstance, options: { defaultWorkspaceId: string; store?: FastifyRateLimitStoreCtor }): Promise<void> {
  const { config } = app
  // A page of another origin (DNS rebinding) is refused before anything else; so is a key guesser past its budget.
  app.addHook('onRequest', async (request) => {
    if (!sameOrigin(request, config.corsOrigins)) throw new AppError('forbidden', `Requests from the origin ${request.headers.origin} are not accepted: /mcp answers Tandem's own origin and TANDEM_CORS_ORIGINS.`)
  })
  if (config.rateLimit || config.peerRateLimit) await app.register(rateLimits, { perKey: config.rateLimit, perPeer: config.peerRateLimit, store: options.store })
  await app.register(authentication, { mode: config.auth, defaultWorkspaceId: options.defaultWorkspaceId })

  const hidden = { hide: true }
  app.post('/mcp', { schema: hidden }, answerPost)

  app.get('/mcp', { schema: hidden }, async (request, reply) => {
    const session = await sessionOf(request)
    const raw = openEventStream(request, reply)
    const stream = new NotificationStream(raw, app.database.db, app.events, session.id, request.principal, { keepAliveMs: config.sseKeepAliveMs, maxBufferBytes: config.sseMaxBufferBytes, maxLifetimeMs: config.sseMaxLifetimeMs }, request.log)
    if (raw.destroyed) stream.close()
  })

  app.delete('/mcp', { schema: hidden }, async (request, reply) => {
    const session = await sessionOf(request)
    await endSession(app.database.db, session.id)
    return reply.code(204).send(null)
  })
}

/** The /mcp routes, in a context of their own (registered without fastify-plugin: its hooks stay inside). */
export const mcpEndpoint = routes
