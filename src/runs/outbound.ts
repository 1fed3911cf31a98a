// The outgoing client adapters use: fetch and lookup through the egress guard (one per app).
import type { FastifyInstance } from 'fastify'
import { lookup } from 'node:dns'
import type { LookupFunction } from 'node:net'

export interface OutboundClient {
  fetch: typeof fetch
  lookup: LookupFunction
}

export function outboundClient(_app: FastifyInstance): OutboundClient {
  return { fetch: (input, init) => fetch(input, { ...init, redirect: 'manual' }), lookup: lookup as LookupFunction }
}
