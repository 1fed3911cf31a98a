// Security headers on every response, and the request id. helmet's defaults that apply to a JSON API (the
// one HTML route sets its own Content-Security-Policy). Constant, so set in one call rather than by a
// per-request middleware: with hooks on every route it cut get-agent from 13.2k to 9.1k req/s (npm run bench).
import type { FastifyInstance, FastifyReply } from 'fastify'
import fp from 'fastify-plugin'

export const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'SAMEORIGIN',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
  'x-dns-prefetch-control': 'off',
  'x-permitted-cross-domain-policies': 'none',
  'origin-agent-cluster': '?1',
}

const NAMES = Object.keys(SECURITY_HEADERS) as Array<keyof typeof SECURITY_HEADERS>
/** The headers every reply starts with, x-request-id last (its value is the request's). */
const PRESET = { ...SECURITY_HEADERS, 'x-request-id': '' }

/**
 * Where Fastify keeps a reply's headers (lower-case names; written at writeHead), found on the first reply. Nine
 * header() calls were 4–7% of a request's CPU (bench:profile: each lower-cases its name and grows the object one
 * key at a time); a clone of one constant object is one step. Undefined if a Fastify release renames it: then
 * the headers go through header() as before.
 */
let replyHeaders: symbol | undefined | null = null
const headersKey = (reply: FastifyReply) =>
  replyHeaders === null ? (replyHeaders = Object.getOwnPropertySymbols(reply).find((s) => s.description === 'fastify.reply.headers')) : replyHeaders

const isEmpty = (headers: object) => {
  for (const _ in headers) return false
  return true
}

async function headers(app: FastifyInstance): Promise<void> {
  app.addHook('onRequest', (request, reply, done) => {
    const key = headersKey(reply)
    const slots = reply as unknown as Record<symbol, Record<string, unknown>>
    const current = key && slots[key]
    if (key && current && isEmpty(current)) {
      // Nothing set yet (this hook runs first): the reply's headers are the preset's.
      const fresh: Record<string, unknown> = { ...PRESET }
      fresh['x-request-id'] = request.id
      slots[key] = fresh
    } else {
      for (const name of NAMES) reply.header(name, SECURITY_HEADERS[name])
      reply.header('x-request-id', request.id)
    }
    done()
  })
}

export const securityHeaders = fp(headers, { name: 'tandem-security-headers' })
