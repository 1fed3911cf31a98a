// buildApp(config): the whole service as a Fastify instance; tests use it with inject(), main.ts listens.
import Fastify, { LogController, type FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import cors from '@fastify/cors'
import rateLimit from '@fastify/rate-limit'
import type { Config } from './config.js'
import { connect, type ConnectOptions, type Db } from './db/connect.js'
import { migrateToLatest } from './db/migrate.js'
import { registerAuth } from './http/auth.js'
import { registerDocs } from './http/docs.js'
import { registerNotFound } from './http/not-found.js'
import { registerIdempotency } from './http/idempotency.js'
import { registerJsonBody } from './http/json-body.js'
import { AppError, registerErrorHandler } from './http/problem.js'
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
import { consoleRoutes } from './console/routes.js'

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
    return503OnClosing: true,
  }).withTypeProvider<TypeBoxTypeProvider>()

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
      registerAuth(api, { mode: config.auth, db: database, defaultWorkspaceId })
      if (config.rateLimit) {
        // After authentication (registered above, so its hook runs first): the budget is per API key's principal.
        await api.register(rateLimit, {
          max: config.rateLimit.max,
          timeWindow: config.rateLimit.windowMs,
          hook: 'onRequest',
          keyGenerator: (request) => request.principal?.principalId ?? request.ip,
          errorResponseBuilder: (_request, context) =>
            new AppError('rate-limited', `At most ${context.max} requests per ${context.after === '1 minute' ? 'minute' : context.after}; retry in ${Math.ceil(context.ttl / 1000)} s.`, undefined, {
              'retry-after': String(Math.max(1, Math.ceil(context.ttl / 1000))),
            }),
        })
      }
      registerIdempotency(api)
      await api.register(agentRoutes)
      await api.register(streamRoutes)
      await api.register(chatRoutes)
      await api.register(cycleRoutes(options.drafter ?? createDrafter(config)))
    },
    { prefix: '/api' },
  )
  await app.register(consoleRoutes)
  return app
}
