// Authentication for every /api route: a Bearer API key, or — in `local` mode only — no header
// from a loopback peer, which acts as the local admin of the `default` workspace.
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { isIP } from 'node:net'
import fp from 'fastify-plugin'
import type { AuthMode } from '../config.js'
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

function unauthorized(detail: string): AppError {
  return new AppError('unauthorized', detail, undefined, { 'www-authenticate': 'Bearer realm="tandem"' })
}

async function auth(app: FastifyInstance, options: { mode: AuthMode; defaultWorkspaceId: string }): Promise<void> {
  const { db } = app.database
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
    findPrincipalByKey(db, match[1] as string).then((principal) => {
      if (!principal) return done(unauthorized('The API key is not valid or has been revoked.'))
      request.principal = principal
      done()
    }, done)
  })
}

/** Authentication for the routes of the context it is registered in (the /api prefix). */
export const authentication = fp(auth, { name: 'tandem-auth', dependencies: ['tandem-problems', 'tandem-database'] })
