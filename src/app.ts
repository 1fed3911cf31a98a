// buildApp(config): the whole service as a Fastify instance; tests use it with inject(), main.ts listens.
import Fastify, { LogController, type FastifyInstance, type FastifyReply } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import cors from '@fastify/cors'
import rateLimit from '@fastify/rate-limit'
import type { Config } from './config.js'
import { connect, type ConnectOptions, type Db } from './db/connect.js'
import { migrateToLatest } from './db/migrate.js'
import { refuseInLocalMode, registerAuth } from './http/auth.js'
import { registerDocs } from './http/docs.js'
import { registerNotFound } from './http/not-found.js'
import { registerIdempotency } from './http/idempotency.js'
import { registerJsonBody } from './http/json-body.js'
import { AppError, registerErrorHandler, toProblem } from './http/problem.js'
import { validatorCompiler } from './http/validation.js'
import { randomUUID } from 'node:crypto'
import { DEFAULT_WORKSPACE, ensureWorkspace } from './workspaces/store.js'
import { agentRoutes } from './agents/routes.js'
import { streamRoutes } from './streams/routes.js'
import { chatRoutes } from './chat/routes.js'
import { cycleRoutes } from './cycles/routes.js'
import { createDrafter } from './cycles/drafter/index.js'
import type { Drafter } from './cycles/drafter/types.js'
import { healthRoutes } from './health.js'

declare module 'fastify' {
  interface FastifyInstance {
    database: Db
    config: Config
  }
}

// Security headers on every response (helmet's defaults that apply to a JSON API; the one HTML route sets
// its own Content-Security-Policy). Constant, so set in one call with the request id rather than by a
// per-request middleware: with hooks on every route it cut get-agent from 13.2k to 9.1k req/s (npm run bench).
const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'SAMEORIGIN',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
  'x-dns-prefetch-control': 'off',
  'x-permitted-cross-domain-policies': 'none',
  'origin-agent-cluster': '?1',
}

// Connection limits for a public bind (see README, Security). Headers must arrive within 10 s (slow-loris);
// an idle keep-alive connection is closed after 10 s; Node checks both every second instead of every 30 s.
// TANDEM_REQUEST_TIMEOUT_MS bounds receiving a whole request; an SSE stream's response is not bounded by it.
const HEADERS_TIMEOUT_MS = 10000
const KEEP_ALIVE_TIMEOUT_MS = 10000
const CONNECTIONS_CHECKING_INTERVAL_MS = 1000

function rateLimited(max: number, after: string, ttlMs: number): AppError {
  const seconds = Math.max(1, Math.ceil(ttlMs / 1000))
  return new AppError('rate-limited', `At most ${max} requests per ${after === '1 minute' ? 'minute' : after}; retry in ${seconds} s.`, undefined, { 'retry-after': String(seconds) })
}

const WINDOW_NAMES: Record<number, string> = { 1000: 'second', 60000: 'minute', 3600000: 'hour' }

export interface BuildOptions {
  connect?: ConnectOptions
  /** Replaces the drafter TANDEM_DRAFTER chooses (tests of the model-backed engine use this to set keys). */
  drafter?: Drafter
}

export async function buildApp(config: Config, options: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: { level: config.logLevel, redact: ['req.headers.authorization'] },
    // Requests are logged at debug level (see below), so that the default level costs nothing per request.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'reqId' }),
    genReqId: () => randomUUID(),
    bodyLimit: 1024 * 1024,
    // A request (headers and body) must arrive, and be answered, within this time; must exceed the drafter's.
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    http: {
      headersTimeout: Math.min(HEADERS_TIMEOUT_MS, config.requestTimeoutMs),
      connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS,
    },
    return503OnClosing: true,
    // A URL that cannot be decoded (/api/agents/%E0%A4%A) is refused by the router before any hook runs.
    frameworkErrors: (error, request, rawReply) => {
      const reply = rawReply as unknown as FastifyReply
      reply
        .code(400)
        .headers({ ...SECURITY_HEADERS, 'x-request-id': request.id })
        .type('application/problem+json; charset=utf-8')
        .send(toProblem(error.code === 'FST_ERR_BAD_URL' ? 'malformed-url' : 'validation-error', error.code === 'FST_ERR_BAD_URL' ? 'The URL holds a percent-encoding that is not valid UTF-8.' : 'The request is not valid.'))
    },
  }).withTypeProvider<TypeBoxTypeProvider>()
  app.server.maxConnections = config.maxConnections

  const database = connect(config.databaseUrl, options.connect)
  app.decorate('database', database)
  app.decorate('config', config)
  app.addHook('onClose', async () => database.close())

  await migrateToLatest(database)
  const defaultWorkspaceId = await ensureWorkspace(database.db, DEFAULT_WORKSPACE)

  app.setValidatorCompiler(validatorCompiler)
  // Only JSON bodies: without the text/plain parser any other media type is a 415.
  app.removeContentTypeParser('text/plain')
  registerJsonBody(app)
  registerErrorHandler(app)
  registerNotFound(app)
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers({ ...SECURITY_HEADERS, 'x-request-id': request.id })
    done()
  })
  if (config.auth === 'local') {
    // The whole server (docs and console too): a rebinding page or a proxy must not reach any of it.
    app.addHook('onRequest', (request, _reply, done) => done(refuseInLocalMode(request.headers) ?? undefined))
  }
  if (config.logLevel === 'debug' || config.logLevel === 'trace') {
    app.addHook('onResponse', async (request, reply) => {
      request.log.debug({ method: request.method, url: request.url, status: reply.statusCode, ms: reply.elapsedTime }, 'request')
    })
  }

  if (config.corsOrigins) {
    await app.register(cors, { origin: config.corsOrigins.includes('*') ? '*' : config.corsOrigins, exposedHeaders: ['location', 'etag', 'x-request-id', 'idempotent-replayed', 'retry-after'] })
  }
  await registerDocs(app)
  await app.register(healthRoutes)
  await app.register(
    async (api) => {
      if (config.rateLimit || config.peerRateLimit) {
        // Per API key: a hook on each route, which runs after the context's hooks (authentication among them).
        await api.register(rateLimit, {
          global: config.rateLimit !== null,
          max: config.rateLimit?.max ?? 1,
          timeWindow: config.rateLimit?.windowMs ?? 1000,
          hook: 'onRequest',
          keyGenerator: (request) => request.principal.principalId,
          errorResponseBuilder: (_request, context) => rateLimited(context.max, context.after, context.ttl),
        })
      }
      if (config.peerRateLimit) {
        // Per peer address, before authentication: a key guesser is refused without its keys being looked up.
        const { max, windowMs } = config.peerRateLimit
        const countPeer = api.createRateLimit({ max, timeWindow: windowMs, keyGenerator: (request) => `peer ${request.ip}` })
        api.addHook('onRequest', async (request) => {
          const count = await countPeer(request)
          if (!count.isAllowed && count.isExceeded) throw rateLimited(max, WINDOW_NAMES[windowMs] ?? `${windowMs} ms`, count.ttl)
        })
      }
      registerAuth(api, { mode: config.auth, db: database, defaultWorkspaceId })
      registerIdempotency(api)
      await api.register(agentRoutes)
      await api.register(streamRoutes)
      await api.register(chatRoutes)
      await api.register(cycleRoutes(options.drafter ?? createDrafter(config)))
    },
    { prefix: '/api' },
  )
  return app
}
