// Authentication for every /api route: a Bearer API key, or — in `local` mode only — no header
// from a loopback peer, which acts as the local admin of the `default` workspace. Then the route's own rules:
// agent keys only where a route declares `config.agentKeys`, and admins only where it declares `config.adminOnly`.
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { isIP } from 'node:net'
import fp from 'fastify-plugin'
import type { AuthMode } from '../config.js'
import { LOCAL_ADMIN_ID, LOCAL_HANDLE, findPrincipalByKey, type Principal } from './store.js'
import { AppError } from '../http/problem.js'

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal
  }
  interface FastifyContextConfig {
    /** Agent keys may call this route (every other /api route refuses them with 403). */
    agentKeys?: boolean
    /** Only admins may call this route; the text completes "Only admins may …" in the 403. */
    adminOnly?: string
  }
}

export { LOCAL_ADMIN_ID }

/** The socket's peer, never a forwarded header: X-Forwarded-For is not trusted. */
export function isLoopbackPeer(address: string | undefined): boolean {
  if (!address) return false
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address
  if (isIP(v4) === 4) return v4.startsWith('127.')
  return address === '::1'
}

// Local mode trusts the loopback peer, so it must know the request really comes from this machine's own
// user: a reverse proxy on the same host (nginx, Caddy, ssh -L) or a browser page under DNS rebinding also
// arrives over loopback. A proxy announces itself in these headers; a rebinding page sends its own Host.
const PROXY_HEADERS = ['forwarded', 'x-real-ip', 'via']
const LOCAL_HOST = /^(?:localhost|127\.0\.0\.1|\[::1\])(?::\d{1,5})?$/i

/** Why local mode refuses this request (a Host other than loopback's, or a proxy's header), or null. */
export function refuseInLocalMode(headers: Record<string, string | string[] | undefined>): AppError | null {
  for (const name of Object.keys(headers)) {
    if (PROXY_HEADERS.includes(name) || name.startsWith('x-forwarded-')) {
      return new AppError(
        'proxied-request',
        `The request carries ${name}: it came through a proxy, and TANDEM_AUTH=local only serves direct requests from this machine. Behind a proxy, run with TANDEM_AUTH=required and API keys.`,
      )
    }
  }
  const host = headers.host
  if (typeof host !== 'string' || !LOCAL_HOST.test(host)) {
    return new AppError(
      'misdirected-request',
      'TANDEM_AUTH=local only answers requests addressed to localhost, 127.0.0.1 or [::1]. To serve another name, run with TANDEM_AUTH=required and API keys.',
    )
  }
  return null
}

function unauthorized(detail: string): AppError {
  return new AppError('unauthorized', detail, undefined, { 'www-authenticate': 'Bearer realm="tandem"' })
}

/** Why this principal may not call this route, or undefined. Checked before the body is read or validated. */
function refusal(request: FastifyRequest, principal: Principal): AppError | undefined {
  const config = request.routeOptions.config ?? {}
  if (principal.role === 'agent' && !config.agentKeys) {
    return new AppError('forbidden', 'An agent key may only claim and answer its agent\'s tasks and call GET /api/me.')
  }
  if (config.adminOnly && principal.role !== 'admin') {
    return new AppError('forbidden', `Only admins may ${config.adminOnly}; this key is a${principal.role === 'agent' ? 'n' : ''} ${principal.role}'s.`)
  }
  return undefined
}

async function auth(app: FastifyInstance, options: { mode: AuthMode; defaultWorkspaceId: string }): Promise<void> {
  const { db } = app.database
  const localAdmin: Principal = { workspaceId: options.defaultWorkspaceId, principalId: LOCAL_ADMIN_ID, role: 'admin', handle: LOCAL_HANDLE, agentId: null }
  app.decorateRequest('principal', null as unknown as Principal)
  // Callback style: the local path is synchronous and costs no promise.
  app.addHook('onRequest', (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) => {
    const header = request.headers.authorization
    if (header === undefined) {
      if (options.mode === 'local' && isLoopbackPeer(request.socket.remoteAddress)) {
        request.principal = localAdmin
        return done(refusal(request, localAdmin))
      }
      return done(unauthorized('Send an API key as Authorization: Bearer <key>.'))
    }
    const match = /^Bearer +(\S+) *$/i.exec(header)
    if (!match) return done(unauthorized('The Authorization header must be "Bearer <key>".'))
    findPrincipalByKey(db, match[1] as string).then((principal) => {
      if (!principal) return done(unauthorized('The API key is not valid or has been revoked.'))
      request.principal = principal
      done(refusal(request, principal))
    }, done)
  })
}

/** Authentication for the routes of the context it is registered in (the /api prefix). */
export const authentication = fp(auth, { name: 'tandem-auth', dependencies: ['tandem-problems', 'tandem-database'] })
