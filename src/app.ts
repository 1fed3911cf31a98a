// buildApp(config): the whole service as a Fastify instance; tests use it with inject(), main.ts listens.
// Cross-cutting behaviour comes from named plugins (fastify-plugin, with declared dependencies): problem
// details, JSON bodies, path ids, security headers, the database, and under /api authentication, rate
// limits and idempotency keys. Feature routes are registered after them and so all get the same behaviour.
import Fastify, { LogController, type FastifyInstance, type FastifyReply } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import cors from '@fastify/cors'
import { randomUUID } from 'node:crypto'
import type { Config } from './config.js'
import type { ConnectOptions } from './db/connect.js'
import { databasePlugin } from './db/plugin.js'
import { authentication, refuseInLocalMode } from './principals/auth.js'
import { registerDocs } from './http/docs.js'
import { eventWebhooks } from './events/payloads.js'
import { notFoundProblems } from './http/not-found.js'
import { idempotencyKeys } from './http/idempotency.js'
import { jsonBodies } from './http/json-body.js'
import { lowerCasePathIds } from './http/path-ids.js'
import { clientErrorHandler, problemDetails, toProblem, type ProblemKind } from './http/problem.js'
import { rateLimits } from './http/rate-limit.js'
import { SECURITY_HEADERS, securityHeaders } from './http/security-headers.js'
import { DEFAULT_WORKSPACE, ensureWorkspace } from './workspaces/store.js'
import { ensureLocalPrincipal } from './principals/store.js'
import { principalRoutes } from './principals/routes.js'
import { credentialRoutes } from './credentials/routes.js'
import { attachVault, openVault, type Vault } from './credentials/vault.js'
import { attachMessageWritten } from './chat/written.js'
import { queueMessageTriggers } from './triggers/message-triggers.js'
import { agentRoutes } from './agents/routes.js'
import { assetRoutes } from './assets/routes.js'
import { templateRoutes } from './templates/routes.js'
import { mcpServerRoutes } from './mcp/routes.js'
import { mcpEndpoint } from './mcp-server/routes.js'
import { streamRoutes } from './streams/routes.js'
import { chatRoutes } from './chat/routes.js'
import { cycleRoutes } from './cycles/routes.js'
import { agentChanged } from './drafter/agent-changes.js'
import { createDrafter } from './drafter/index.js'
import type { Drafter } from './drafter/types.js'
import { healthRoutes } from './health.js'
import { consoleRoutes } from './console/routes.js'
import { EventHub } from './events/hub.js'
import { eventRoutes } from './events/routes.js'
import { webhookRoutes } from './events/webhooks/routes.js'
import { startRetention } from './events/retention.js'
import { startFold } from './insights/fold.js'
import { createJobs, type AnyTaskList } from './jobs/index.js'
import { InstanceRegistry } from './failover/registry.js'
import { taskList } from './task-list.js'
import { runRoutes } from './runs/routes.js'
import { toolCallRoutes } from './runs/tool-calls/routes.js'
import { reportRunMetrics } from './runs/metrics.js'
import { taskResultRoutes } from './runs/tasks/routes.js'
import { createMetrics } from './metrics/metrics.js'
import { metricsRoutes } from './metrics/plugin.js'
import { memoryRateLimitStore, sharedRateLimitStore } from './http/rate-limit-store.js'
import { inboxRoutes } from './inbox/routes.js'
import { insightRoutes } from './insights/routes.js'
import { reportInsightMetrics } from './insights/metrics.js'
import { scheduleRoutes } from './schedules/routes.js'
import { catchUpSchedules } from './schedules/firing.js'
import { resumeDecisionClocks } from './waits/clock.js'
import { messageTriggerRoutes } from './triggers/routes.js'
import { hookAdminRoutes, inboundHookRoutes } from './hooks/routes.js'
import { HeldRequests } from './http/rate-limit-slots.js'
import { createEgressGuard, type EgressGuard } from './net/egress.js'
import { a2aApiRoutes } from './a2a/api-routes.js'
import { a2aRoutes } from './a2a/routes.js'

declare module 'fastify' {
  interface FastifyInstance {
    config: Config
    events: EventHub
    /** Seals credential secrets with the current key (see src/credentials/vault.ts). */
    vault: Vault
    /** Fair shares of the connection slots for event streams and long-polling claims (src/http/rate-limit-slots.ts). */
    heldRequests: HeldRequests
    /** Every outgoing call to an address a user gave (agents, webhooks, MCP servers) goes through it (src/net/egress.ts). */
    egress: EgressGuard
    /** The origin the server listens on, once it does (set at onListen: each delivery's payload names it, src/runs/tasks/payload.ts). */
    listening: { origin: string | null }
    /** This instance's id and heartbeat, and which others are alive (src/failover/registry.ts). */
    instances: InstanceRegistry
  }
}

/** The methods the API answers, for CORS preflights. */
export const API_METHODS = ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE']

// Connection limits for a public bind (see README, Security). Headers must arrive within 10 s (slow-loris);
// an idle keep-alive connection is closed after 10 s; Node checks both every second instead of every 30 s.
// TANDEM_REQUEST_TIMEOUT_MS bounds receiving a whole request; an SSE stream's response is not bounded by it.
const HEADERS_TIMEOUT_MS = 10000
const KEEP_ALIVE_TIMEOUT_MS = 10000
const CONNECTIONS_CHECKING_INTERVAL_MS = 1000

export interface BuildOptions {
  connect?: ConnectOptions
  /** Replaces the drafter TANDEM_DRAFTER chooses (tests of the model-backed engine use this to set keys). */
  drafter?: Drafter
  /** Where log lines go instead of stdout (tests search them for secrets). */
  logStream?: { write(line: string): void }
  /** Jobs of a test's own, beside the service's task list. */
  extraTasks?: AnyTaskList
}

export async function buildApp(config: Config, options: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    // Secrets never reach a log line: keys, and credential secrets should a body ever be logged.
    logger: {
      level: config.logLevel,
      redact: ['req.headers.authorization', 'req.headers["tandem-mcp-mark"]', 'req.body.secret', 'body.secret', 'request.body.secret', 'secret'],
      ...(options.logStream ? { stream: options.logStream } : {}),
    },
    // Requests are logged at debug level (see below), so that the default level costs nothing per request.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'reqId' }),
    genReqId: () => randomUUID(),
    // The database plugin migrates at start: on a large database (an index built over millions of scorecard rows)
    // that takes longer than Fastify's default 10 s, which would stop the start-up half-way.
    pluginTimeout: 10 * 60_000,
    bodyLimit: 1024 * 1024,
    // A request (headers and body) must arrive, and be answered, within this time; must exceed the drafter's.
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    http: {
      headersTimeout: Math.min(HEADERS_TIMEOUT_MS, config.requestTimeoutMs),
      connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS,
    },
    return503OnClosing: true,
    clientErrorHandler,
    // A URL that cannot be decoded (/api/agents/%E0%A4%A) is refused by the router before any hook runs.
    frameworkErrors: (error, request, rawReply) => {
      const reply = rawReply as unknown as FastifyReply
      // A path parameter longer than the router takes (100 characters) stays the router's 414, as a problem.
      const [kind, detail]: [ProblemKind, string] =
        error.code === 'FST_ERR_BAD_URL'
          ? ['malformed-url', 'The URL holds a percent-encoding that is not valid UTF-8.']
          : error.statusCode === 414
            ? ['uri-too-long', 'A path parameter is longer than 100 characters.']
            : ['validation-error', 'The request is not valid.']
      const problem = toProblem(kind, detail)
      reply
        .code(problem.status)
        .headers({ ...SECURITY_HEADERS, 'x-request-id': request.id })
        .type('application/problem+json; charset=utf-8')
        .send(problem)
    },
  }).withTypeProvider<TypeBoxTypeProvider>()
  app.server.maxConnections = config.maxConnections
  app.decorate('heldRequests', new HeldRequests({ perPrincipal: config.maxStreamsPerKey, perPeer: config.maxStreamsPerPeer }))

  app.decorate('config', config)
  app.decorate('egress', createEgressGuard(config.egressAllow))
  // Read once: fastify's listeningOrigin asks the socket for its address at every call.
  app.decorate('listening', { origin: null })
  app.addHook('onListen', function (done) {
    this.listening.origin = this.listeningOrigin
    done()
  })
  await app.register(databasePlugin, { url: config.databaseUrl, connect: options.connect })
  // After the database: a SQLite file's secret.key lives beside it, in the folder the database plugin makes.
  const vault = openVault(config)
  app.decorate('vault', vault)
  attachVault(app.database.db, vault)
  attachMessageWritten(app.database.db, queueMessageTriggers)
  const defaultWorkspaceId = await ensureWorkspace(app.database.db, DEFAULT_WORKSPACE)
  await ensureLocalPrincipal(app.database.db, defaultWorkspaceId)

  await app.register(problemDetails)
  await app.register(notFoundProblems)
  await app.register(jsonBodies)
  await app.register(lowerCasePathIds)
  await app.register(securityHeaders)
  if (config.auth === 'local') {
    // The whole server (docs and console too): a rebinding page or a proxy must not reach any of it.
    app.addHook('onRequest', (request, _reply, done) => done(refuseInLocalMode(request.headers) ?? undefined))
  }
  // Tests give each PostgreSQL schema its own graphile-worker schema beside it.
  const jobs = await createJobs(app.database, {
    concurrency: config.workers,
    databaseUrl: config.databaseUrl,
    tasks: { ...options.extraTasks, ...taskList },
    ...(app.database.schema ? { schema: `${app.database.schema}_jobs` } : {}),
  })
  // Heartbeats, and taking over dead instances' jobs with graphile-worker's force_unlock_workers.
  const instances = new InstanceRegistry({
    db: app.database.db,
    dialect: app.database.dialect,
    boundMs: config.failoverMs,
    log: app.log,
    ...(app.database.dialect === 'postgres' ? { jobsSchema: app.database.schema ? `${app.database.schema}_jobs` : 'graphile_worker' } : {}),
  })
  app.decorate('instances', instances)
  app.addHook('onReady', async () => {
    await jobs.start(app)
    await instances.start(jobs.workerPoolId())
  })
  // Schedules whose tick passed while no instance ran fire once now, as their latest missed tick.
  app.addHook('onReady', async () => {
    const caughtUp = await catchUpSchedules(app.database.db)
    if (caughtUp > 0) app.log.info({ schedules: caughtUp }, 'schedules missed ticks while stopped: each fires its latest missed tick now')
  })
  // Decision timers not yet taken effect get their jobs again (a killed instance's locked job is taken over).
  app.addHook('onReady', async () => {
    if (config.workers === 0) return
    const resumed = await resumeDecisionClocks(app.database.db)
    if (resumed > 0) app.log.debug({ timers: resumed }, 'decision timers re-armed at start-up')
  })
  app.addHook('preClose', async () => jobs.stop())
  app.addHook('onClose', async () => instances.stop())

  // Events: one listener per instance; open event streams end before the server stops (preClose), so that
  // shutdown is not held up by them.
  const events = new EventHub(app.database.db, app.log)
  await events.start(app.database.dialect === 'postgres' ? config.databaseUrl : undefined)
  app.decorate('events', events)
  app.addHook('preClose', async () => events.close())
  app.addHook('onClose', async () => events.close())
  const retention = startRetention(app.database.db, config.eventRetentionDays, app.log)
  app.addHook('onClose', async () => retention.stop())
  // The scorecards' summed rollups follow the engine's notes a second later (src/insights/fold.ts).
  if (config.insightsFoldMs > 0) {
    const fold = startFold(app.database.db, app.log, config.insightsFoldMs)
    app.addHook('preClose', async () => fold.stop())
  }
  // Access logs cost a hook on every request: registered only when asked for (or at debug level).
  if (config.accessLog || config.logLevel === 'debug' || config.logLevel === 'trace') {
    const level = config.accessLog ? 'info' : 'debug'
    app.addHook('onResponse', (request, reply, done) => {
      request.log[level](
        { method: request.method, url: request.url, route: request.routeOptions.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 100) / 100, peer: request.ip },
        'request',
      )
      done()
    })
  }
  await app.register(metricsRoutes, { metrics: createMetrics({ poolInUse: app.database.poolInUse }), auth: config.auth, token: config.metricsToken })
  reportRunMetrics(app)
  reportInsightMetrics(app, config.metricsAgentLabels)
  // Traces only when an OTLP endpoint is set: otherwise nothing of the OpenTelemetry SDK is even loaded.
  if (config.tracing) await (await import('./tracing/index.js')).startTracing(app, config.tracing)
  const sharedStore = config.redisUrl && (config.rateLimit || config.peerRateLimit) ? await sharedRateLimitStore(config.redisUrl, app.log, app.metrics) : null
  if (sharedStore) app.addHook('onClose', sharedStore.close)
  // /api, /mcp and /a2a spend one budget per key and per peer (in Redis, or in this process's memory).
  const apiLimitStore = sharedStore?.Store ?? memoryRateLimitStore()

  if (config.corsOrigins) {
    await app.register(cors, {
      origin: config.corsOrigins.includes('*') ? '*' : config.corsOrigins,
      methods: API_METHODS,
      allowedHeaders: ['authorization', 'content-type', 'idempotency-key', 'if-match', 'tandem-client', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id'],
      exposedHeaders: ['location', 'etag', 'x-request-id', 'idempotent-replayed', 'retry-after', 'mcp-session-id'],
    })
  }
  await registerDocs(app, { webhooks: eventWebhooks })
  await app.register(healthRoutes)
  await app.register(
    async (api) => {
      // Every /api route, the task-result route included. Before authentication: the per-peer budget refuses a
      // key guesser before its keys are looked up.
      if (config.rateLimit || config.peerRateLimit) await api.register(rateLimits, { perKey: config.rateLimit, perPeer: config.peerRateLimit, store: apiLimitStore })
      await api.register(async (keyed) => {
        await keyed.register(authentication, { mode: config.auth, defaultWorkspaceId })
        // A claim older than the request time-out belongs to a dead request (a late commit of a live one fails).
        await keyed.register(idempotencyKeys, { abandonedAfterMs: config.requestTimeoutMs, purgeEveryMs: 10 * 60_000, holders: instances })
        await keyed.register(principalRoutes)
        // The agents tell the drafter of changes (it keeps their words indexed): agents import nothing of it.
        await keyed.register(agentRoutes, { onAgentChanged: agentChanged })
        await keyed.register(assetRoutes)
        await keyed.register(templateRoutes)
        await keyed.register(mcpServerRoutes)
        await keyed.register(credentialRoutes(vault))
        await keyed.register(streamRoutes)
        await keyed.register(chatRoutes)
        await keyed.register(cycleRoutes(options.drafter ?? createDrafter(config)))
        await keyed.register(eventRoutes)
        await keyed.register(webhookRoutes)
        await keyed.register(runRoutes)
        await keyed.register(toolCallRoutes)
        await keyed.register(inboxRoutes)
        await keyed.register(scheduleRoutes)
        await keyed.register(messageTriggerRoutes)
        await keyed.register(hookAdminRoutes)
        await keyed.register(a2aApiRoutes)
        await keyed.register(insightRoutes)
      })
      // Outside the API-key authentication above: a task's result is answered with the task's own token.
      await api.register(taskResultRoutes)
    },
    { prefix: '/api' },
  )
  // Outside the API-key authentication: an inbound hook's call is signed with the hook's own secret.
  await app.register(inboundHookRoutes({ store: sharedStore?.Store }), { prefix: '/hooks' })
  // Tandem as an MCP server (its own context: the keys, roles and rate limits of /api).
  await app.register(mcpEndpoint, { defaultWorkspaceId, store: apiLimitStore })
  // Exposed cycles as A2A agents: a public card, and a JSON-RPC endpoint with /api's keys (docs/a2a.md).
  await app.register(a2aRoutes({ defaultWorkspaceId, store: apiLimitStore }), { prefix: '/a2a' })
  await app.register(consoleRoutes)
  return app
}
