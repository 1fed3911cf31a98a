// GET /metrics and the request-duration histogram. The histogram is labelled by the route *template*
// (`/api/agents/:id`), never the raw URL, so ids cannot blow up the series count. /metrics is open only in local
// auth mode (which refuses proxied and misdirected requests, src/principals/auth.ts); in every other mode — a loopback
// bind behind a reverse proxy included — it needs `Authorization: Bearer $TANDEM_METRICS_TOKEN`, and without that
// variable it does not exist (404), so an instance never shows its internals by accident.
import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import fp from 'fastify-plugin'
import type { AuthMode } from '../config.js'
import { AppError } from '../http/problem.js'
import type { Metrics } from './metrics.js'

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics
  }
}

const digest = (value: string) => createHash('sha256').update(value).digest()

function tokenMatches(header: string | undefined, token: string): boolean {
  const match = header === undefined ? null : /^Bearer +(\S+) *$/i.exec(header)
  // Compared as digests: equal lengths, constant time.
  return match !== null && timingSafeEqual(digest(match[1] as string), digest(token))
}

async function metricsPlugin(app: FastifyInstance, options: { metrics: Metrics; auth: AuthMode; token: string | null }): Promise<void> {
  const { metrics } = options
  app.decorate('metrics', metrics)

  app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    const route = request.routeOptions.url ?? 'unmatched'
    metrics.httpDuration.observe({ method: request.method, route, status: reply.statusCode }, reply.elapsedTime / 1000)
    done()
  })

  // A loopback bind is not enough: a reverse proxy on the same host makes every visitor a loopback peer.
  const open = options.auth === 'local'
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (!open) {
      if (options.token === null) throw new AppError('not-found', 'No route matches GET /metrics.')
      if (!tokenMatches(request.headers.authorization, options.token)) {
        throw new AppError('unauthorized', 'Send the metrics token as Authorization: Bearer <TANDEM_METRICS_TOKEN>.', undefined, {
          'www-authenticate': 'Bearer realm="tandem-metrics"',
        })
      }
    }
    const body = await metrics.registry.metrics()
    return reply.type(metrics.registry.contentType).send(body)
  })
}

export const metricsRoutes = fp(metricsPlugin, { name: 'tandem-metrics', fastify: '5.x' })
