// buildApp(config): the whole service as a Fastify instance; tests use it with inject(), main.ts listens.
// Cross-cutting behaviour comes from named plugins (fastify-plugin, with declared dependencies): problem
// details, JSON bodies, path ids, security headers, the database, and under /api authentication, rate
// limits and idempotency keys. Feature routes are registered after them and so all get the same behaviour.
import Fastify, { LogController, type FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import cors from '@fastify/cors'
import { randomUUID } from 'node:crypto'
import type { Config } from './config.js'
import type { ConnectOptions } from './db/connect.js'
import { databasePlugin } from './db/plugin.js'
import { authentication } from './http/auth.js'
import { registerDocs } from './http/docs.js'
import { notFoundProblems } from './http/not-found.js'
import { idempotencyKeys } from './http/idempotency.js'
import { jsonBodies } from './http/json-body.js'
import { lowerCasePathIds } from './http/path-ids.js'
import { clientErrorHandler, problemDetails } from './http/problem.js'
import { rateLimits } from './http/rate-limit.js'
import { securityHeaders } from './http/security-headers.js'
import { DEFAULT_WORKSPACE, ensureWorkspace } from './workspaces/store.js'
import { ensureLocalPrincipal } from './principals/store.js'
import { principalRoutes } from './principals/routes.js'
import { credentialRoutes } from './credentials/routes.js'
import { openVault, type Vault } from './credentials/vault.js'
import { agentRoutes } from './agents/routes.js'
import { streamRoutes } from './streams/routes.js'
import { chatRoutes } from './chat/routes.js'
import { cycleRoutes } from './cycles/routes.js'
import { createDrafter } from './cycles/drafter/index.js'
import type { Drafter } from './cycles/drafter/types.js'
import { healthRoutes } from './health.js'
import { consoleRoutes } from './console/routes.js'
import { EventHub } from './events/hub.js'
import { eventRoutes } from './events/routes.js'
import { startRetention } from './events/retention.js'
import { createJobs } from './jobs/index.js'
import { runRoutes } from './runs/routes.js'
import { taskResultRoutes } from './runs/task-routes.js'

declare module 'fastify' {
  interface FastifyInstance {
    config: Config
    events: EventHub
    /** Seals credential secrets with the current key (see src/credentials/vault.ts). */
    vault: Vault
  }
}

/** The methods the API answers, for CORS preflights. */
export const API_METHODS = ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE']

export interface BuildOptions {
  connect?: ConnectOptions
  /** Replaces the drafter TANDEM_DRAFTER chooses (tests of the model-backed engine use this to set keys). */
  drafter?: Drafter
  /** Where log lines go instead of stdout (tests search them for secrets). */
  logStream?: { write(line: string): void }
}

export async function buildApp(config: Config, options: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    // Secrets never reach a log line: keys, and credential secrets should a body ever be logged.
    logger: {
      level: config.logLevel,
      redact: ['req.headers.authorization', 'req.body.secret', 'body.secret', 'request.body.secret', 'secret'],
      ...(options.logStream ? { stream: options.logStream } : {}),
    },
    // Requests are logged at debug level (see below), so that the default level costs nothing per request.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'reqId' }),
    genReqId: () => randomUUID(),
    bodyLimit: 1024 * 1024,
    // A request (headers and body) must arrive, and be answered, within this time; must exceed the drafter's.
    requestTimeout: config.requestTimeoutMs,
    return503OnClosing: true,
    clientErrorHandler,
  }).withTypeProvider<TypeBoxTypeProvider>()

  app.decorate('config', config)
  await app.register(databasePlugin, { url: config.databaseUrl, connect: options.connect })
  // After connecting: with SQLite and no TANDEM_SECRET_KEY the key file is written beside the database file.
  const vault = openVault(config)
  app.decorate('vault', vault)
  const defaultWorkspaceId = await ensureWorkspace(app.database.db, DEFAULT_WORKSPACE)

  await app.register(problemDetails)
  await app.register(notFoundProblems)
  await app.register(jsonBodies)
  await app.register(lowerCasePathIds)
  await app.register(securityHeaders)
  // Tests give each PostgreSQL schema its own graphile-worker schema beside it.
  const jobs = await createJobs(app.database, {
    concurrency: config.workers,
    databaseUrl: config.databaseUrl,
    ...(app.database.schema ? { schema: `${app.database.schema}_jobs` } : {}),
  })
  app.addHook('onReady', async () => jobs.start(app))
  app.addHook('preClose', async () => jobs.stop())
  await ensureLocalPrincipal(app.database.db, defaultWorkspaceId)

  // Events: one listener per instance; open event streams end before the server stops (preClose), so that
  // shutdown is not held up by them.
  const events = new EventHub(app.database.db, app.log)
  await events.start(app.database.dialect === 'postgres' ? config.databaseUrl : undefined)
  app.decorate('events', events)
  app.addHook('preClose', async () => events.close())
  app.addHook('onClose', async () => events.close())
  const retention = startRetention(app.database.db, config.eventRetentionDays, app.log)
  app.addHook('onClose', async () => retention.stop())
  if (config.logLevel === 'debug' || config.logLevel === 'trace') {
    app.addHook('onResponse', async (request, reply) => {
      request.log.debug({ method: request.method, url: request.url, status: reply.statusCode, ms: reply.elapsedTime }, 'request')
    })
  }

  if (config.corsOrigins) {
    await app.register(cors, {
      origin: config.corsOrigins.includes('*') ? '*' : config.corsOrigins,
      methods: API_METHODS,
      allowedHeaders: ['authorization', 'content-type', 'idempotency-key', 'if-match'],
      exposedHeaders: ['location', 'etag', 'x-request-id', 'idempotent-replayed', 'retry-after'],
    })
  }
  await registerDocs(app)
  await app.register(healthRoutes)
  await app.register(
    async (api) => {
      await api.register(authentication, { mode: config.auth, defaultWorkspaceId })
      if (config.rateLimit) await api.register(rateLimits, config.rateLimit)
      // A claim older than the request time-out belongs to a dead request (a late commit of a live one fails).
      await api.register(idempotencyKeys, { abandonedAfterMs: config.requestTimeoutMs, purgeEveryMs: 10 * 60_000 })
      await api.register(principalRoutes)
      await api.register(agentRoutes)
      await api.register(credentialRoutes(vault))
      await api.register(streamRoutes)
      await api.register(chatRoutes)
      await api.register(cycleRoutes(options.drafter ?? createDrafter(config)))
      await api.register(eventRoutes)
      await api.register(runRoutes)
    },
    { prefix: '/api' },
  )
  // Outside the API-key authentication above: a task's result is answered with the task's own token.
  await app.register(taskResultRoutes, { prefix: '/api' })
  await app.register(consoleRoutes)
  return app
}
