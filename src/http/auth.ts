// Authentication for every /api route: a Bearer API key, or — in `local` mode only — no header
// from a loopback peer, which acts as the local admin of the `default` workspace.
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { isIP } from 'node:net'
import type { AuthMode } from '../config.js'
import type { Db } from '../db/connect.js'
import { findPrincipalByKey, type Principal } from '../workspaces/store.js'
import { AppError } from './problem.js'

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal
  }
}

/** The principal id of the local admin (a fixed UUIDv7-shaped id, so that authorship is stable). */
export const LOCAL_ADMIN_ID = '00000000-0000-7000-8000-000000000001'

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

export function registerAuth(app: FastifyInstance, options: { mode: AuthMode; db: Db; defaultWorkspaceId: string }): void {
  const localAdmin: Principal = { workspaceId: options.defaultWorkspaceId, principalId: LOCAL_ADMIN_ID, role: 'admin' }
  app.decorateRequest('principal', null as unknown as Principal)
  // Callback style: the local path is synchronous and costs no promise.
  app.addHook('onRequest', (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) => {
    const header = request.headers.authorization
    if (header === undefined) {
      if (options.mode === 'local' && isLoopbackPeer(request.socket.remoteAddress)) {
        request.principal = localAdmin
        return done()
      }
      return done(unauthorized('Send an API key as Authorization: Bearer <key>.'))
    }
    const match = /^Bearer +(\S+) *$/i.exec(header)
    if (!match) return done(unauthorized('The Authorization header must be "Bearer <key>".'))
    findPrincipalByKey(options.db.db, match[1] as string).then((principal) => {
      if (!principal) return done(unauthorized('The API key is not valid or has been revoked.'))
      request.principal = principal
      done()
    }, done)
  })
}
