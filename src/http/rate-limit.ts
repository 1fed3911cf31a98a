// Per-key rate limiting (TANDEM_RATE_LIMIT): after authentication, so the budget is per API key's
// principal (per peer address without one). Past it every request of the context is a 429 problem.
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'
import type { RateLimit } from '../config.js'
import { AppError } from './problem.js'

async function limits(app: FastifyInstance, options: RateLimit): Promise<void> {
  await app.register(rateLimit, {
    max: options.max,
    timeWindow: options.windowMs,
    hook: 'onRequest',
    keyGenerator: (request) => request.principal?.principalId ?? request.ip,
    errorResponseBuilder: (_request, context) =>
      new AppError('rate-limited', `At most ${context.max} requests per ${context.after === '1 minute' ? 'minute' : context.after}; retry in ${Math.ceil(context.ttl / 1000)} s.`, undefined, {
        'retry-after': String(Math.max(1, Math.ceil(context.ttl / 1000))),
      }),
  })
}

export const rateLimits = fp(limits, { name: 'tandem-rate-limit', dependencies: ['tandem-auth'] })
