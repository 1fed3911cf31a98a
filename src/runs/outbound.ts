// The outgoing client adapters use: fetch and lookup through the egress guard (TANDEM_EGRESS_ALLOW), one per app.
import type { FastifyInstance } from 'fastify'
import { createEgressGuard, type EgressGuard } from './egress.js'

const guards = new WeakMap<FastifyInstance, EgressGuard>()

export function outboundClient(app: FastifyInstance): EgressGuard {
  let guard = guards.get(app)
  if (!guard) {
    guard = createEgressGuard(app.config.egressAllow)
    guards.set(app, guard)
  }
  return guard
}
