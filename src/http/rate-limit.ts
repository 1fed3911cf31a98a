// Rate limits (@fastify/rate-limit). Registered before authentication, in the /api context (every /api route,
// POST /api/tasks/{id}/result included):
// - per peer address (TANDEM_PEER_RATE_LIMIT, default the per-key budget): a context hook, so it runs BEFORE the
//   key is looked up — guessing keys meets a 429 without costing a database read per guess;
// - per API key's principal (TANDEM_RATE_LIMIT): the plugin's per-route hook, which runs after the context's
//   hooks (authentication among them), so the principal is known.
// Past either budget the request is a 429 problem with Retry-After. /mcp counts the same way, each HTTP request once.
// With TANDEM_REDIS_URL the counts live in Redis (see rate-limit-store.ts), shared by every instance; a check
// Redis cannot answer lets the request through (fail open).
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import rateLimit, { type FastifyRateLimitStoreCtor } from '@fastify/rate-limit'
import type { RateLimit } from '../config.js'
import { AppError } from './problem.js'
import { isMcpCall } from './via.js'

const WINDOW_NAMES: Record<number, string> = { 1000: 'second', 60000: 'minute', 3600000: 'hour' }

function rateLimited(max: number, after: string, ttlMs: number): AppError {
  const seconds = Math.max(1, Math.ceil(ttlMs / 1000))
  return new AppError('rate-limited', `At most ${max} requests per ${after === '1 minute' ? 'minute' : after}; retry in ${seconds} s.`, undefined, { 'retry-after': String(seconds) })
}

async function limits(app: FastifyInstance, options: { perKey: RateLimit | null; perPeer: RateLimit | null; store?: FastifyRateLimitStoreCtor }): Promise<void> {
  await app.register(rateLimit, {
    ...(options.store ? { store: options.store, skipOnError: true } : {}),
    global: options.perKey !== null,
    max: options.perKey?.max ?? 1,
    timeWindow: options.perKey?.windowMs ?? 1000,
    hook: 'onRequest',
    // The MCP server's in-process calls of a tool's REST twin: the /mcp request already counted (src/http/via.ts).
    allowList: (request) => isMcpCall(request),
    // The task-result route authenticates with a task's token, not a key: there the peer's address is the key.
    keyGenerator: (request) => request.principal?.principalId ?? `peer ${request.ip}`,
    errorResponseBuilder: (_request, context) => rateLimited(context.max, context.after, context.ttl),
  })
  if (options.perPeer) {
    const { max, windowMs } = options.perPeer
    const countPeer = app.createRateLimit({ max, timeWindow: windowMs, keyGenerator: (request) => `peer ${request.ip}` })
    app.addHook('onRequest', async (request) => {
      if (isMcpCall(request)) return
      const count = await countPeer(request)
      if (!count.isAllowed && count.isExceeded) throw rateLimited(max, WINDOW_NAMES[windowMs] ?? `${windowMs} ms`, count.ttl)
    })
  }
}

export const rateLimits = fp(limits, { name: 'tandem-rate-limit', dependencies: ['tandem-problems'] })
