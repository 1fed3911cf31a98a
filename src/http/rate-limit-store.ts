// The rate limit's shared store: with TANDEM_REDIS_URL, @fastify/rate-limit counts in Redis (its own RedisStore and
// Lua script), so every instance spends one budget. A Redis that is down or slow must not take the API down: each
// check fails fast (no offline queue, a short command time-out) and the request goes through (`skipOnError`),
// logged and counted in tandem_rate_limit_store_errors_total.
import { createRequire } from 'node:module'
import type { FastifyBaseLogger } from 'fastify'
import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit'
import type { Redis } from 'ioredis'
import type { Metrics } from '../metrics/metrics.js'

type IncrCallback = Parameters<FastifyRateLimitStore['incr']>[1]
interface RedisStoreLike {
  incr(key: string, callback: IncrCallback, timeWindow: number, max: number): void
  child(routeOptions: unknown): RedisStoreLike
}
type RedisStoreCtor = new (continueExceeding: boolean, exponentialBackoff: boolean, redis: Redis, nameSpace?: string) => RedisStoreLike

const RedisStore = createRequire(import.meta.url)('@fastify/rate-limit/store/RedisStore.js') as RedisStoreCtor

const COMMAND_TIMEOUT_MS = 250
// At start-up, wait this long for Redis before serving (uncounted) without it.
const CONNECT_WAIT_MS = 2000
// One log line per outage, not one per request.
const LOG_EVERY_MS = 10_000

export interface SharedStore {
  Store: FastifyRateLimitStoreCtor
  close(): Promise<void>
}

export async function sharedRateLimitStore(url: string, log: FastifyBaseLogger, metrics: Metrics): Promise<SharedStore> {
  // ioredis is loaded only when a Redis URL is set.
  const { Redis: RedisClient } = await import('ioredis')
  const redis = new RedisClient(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT_MS,
    // Keep trying to come back, at most every 2 s, without holding any request meanwhile.
    retryStrategy: (times) => Math.min(times * 200, 2000),
    lazyConnect: true,
  })
  let lastLogged = 0
  const failed = (error: Error) => {
    metrics.rateLimitStoreErrors.inc()
    if (Date.now() - lastLogged > LOG_EVERY_MS) {
      lastLogged = Date.now()
      log.warn({ err: { message: error.message } }, 'rate limit store (Redis) unreachable: requests are let through uncounted')
    }
  }
  // ioredis reports connection trouble as events; the checks report their own failures below.
  redis.on('error', () => {})
  let waited: NodeJS.Timeout | undefined
  const connected = await Promise.race([
    redis.connect().then(
      () => true,
      () => false,
    ),
    new Promise<boolean>((resolve) => {
      waited = setTimeout(() => resolve(false), CONNECT_WAIT_MS)
    }),
  ])
  clearTimeout(waited)
  if (!connected) log.warn('rate limit store (Redis) unreachable at start-up: requests are let through uncounted until it answers')

  const wrap = (inner: RedisStoreLike): FastifyRateLimitStore => ({
    incr(key, callback, ...rest: unknown[]) {
      const [timeWindow, max] = rest as [number, number]
      inner.incr(
        key,
        (error, result) => {
          if (error) failed(error)
          callback(error, result)
        },
        timeWindow,
        max,
      )
    },
    child: (routeOptions) => wrap(inner.child(routeOptions)),
  })

  class SharedRedisStore {
    constructor(options: { continueExceeding?: boolean; exponentialBackoff?: boolean }) {
      return wrap(new RedisStore(options.continueExceeding ?? false, options.exponentialBackoff ?? false, redis, 'tandem-rate-limit-'))
    }
  }
  return {
    Store: SharedRedisStore as unknown as FastifyRateLimitStoreCtor,
    close: async () => {
      redis.disconnect()
    },
  }
}

type LocalStoreCtor = new (continueExceeding: boolean, exponentialBackoff: boolean, cache?: number) => FastifyRateLimitStore
const LocalStore = createRequire(import.meta.url)('@fastify/rate-limit/store/LocalStore.js') as LocalStoreCtor

/**
 * Without Redis: one in-memory count shared by every context that registers the limits with it (/api and /mcp
 * spend one budget per key and per peer), instead of one count per registration. Its child (the per-peer count) is
 * shared the same way.
 */
export function memoryRateLimitStore(): FastifyRateLimitStoreCtor {
  let shared: FastifyRateLimitStore | undefined
  let child: FastifyRateLimitStore | undefined
  class SharedMemoryStore {
    constructor(options: { continueExceeding?: boolean; exponentialBackoff?: boolean }) {
      shared ??= new LocalStore(options.continueExceeding ?? false, options.exponentialBackoff ?? false)
      const parent = shared
      return { incr: parent.incr.bind(parent), child: (routeOptions: Parameters<FastifyRateLimitStore['child']>[0]) => (child ??= parent.child(routeOptions)) }
    }
  }
  return SharedMemoryStore as unknown as FastifyRateLimitStoreCtor
}
