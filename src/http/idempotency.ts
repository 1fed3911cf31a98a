// Idempotency keys on the POST routes that create (Stripe's semantics): the first request with a key is
// carried out and its response stored; a retry with the same key and body gets that response again
// (`Idempotent-Replayed: true`); the same key with another body is a 422; keys expire after 24 hours.
// Stored in the database, so replays survive restarts and work across instances.
import { createHash } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { now } from '../ids.js'
import { AppError } from './problem.js'

export interface IdempotencyKeyTable {
  workspace_id: string
  key: string
  request_hash: string
  /** 0 while the first request is being carried out. */
  status: number
  headers: string
  body: string
  created_at: string
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** POST routes that create: they honour Idempotency-Key. */
    idempotent?: boolean
  }
  interface FastifyRequest {
    idempotencyKey?: string
  }
}

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000
// A claim still in progress after this long belongs to a request that died (a crash): it may be taken over.
const ABANDONED_AFTER_MS = 60 * 1000
const KEY_FORM = /^[\x21-\x7e]{1,255}$/
const REPLAYED_HEADERS = ['location', 'etag', 'content-type']

const ageOf = (createdAt: string) => Date.now() - Date.parse(createdAt)

function requestHash(request: FastifyRequest): string {
  return createHash('sha256').update(`${request.method} ${request.url}\n${JSON.stringify(request.body)}`).digest('hex')
}

async function claim(db: Kysely<Database>, workspaceId: string, key: string, hash: string): Promise<boolean> {
  const result = await db
    .insertInto('idempotency_keys')
    .values({ workspace_id: workspaceId, key, request_hash: hash, status: 0, headers: '{}', body: '', created_at: now() })
    .onConflict((oc) => oc.columns(['workspace_id', 'key']).doNothing())
    .executeTakeFirst()
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0
}

/** Adds the two hooks to the routes declared `config: { idempotent: true }` only: other routes pay nothing. */
export function registerIdempotency(app: FastifyInstance): void {
  const { db } = app.database

  const replayOrClaim = async (request: FastifyRequest, reply: FastifyReply) => {
    const key = request.headers['idempotency-key']
    if (key === undefined) return
    if (typeof key !== 'string' || !KEY_FORM.test(key)) {
      throw new AppError('validation-error', 'The headers have 1 problem; see errors.', [
        { pointer: '/headers/idempotency-key', detail: 'must be 1 to 255 visible ASCII characters' },
      ])
    }
    const { workspaceId } = request.principal
    const hash = requestHash(request)
    for (let attempt = 0; attempt < 2; attempt++) {
      if (await claim(db, workspaceId, key, hash)) {
        request.idempotencyKey = key
        return
      }
      const stored = await db.selectFrom('idempotency_keys').selectAll().where('workspace_id', '=', workspaceId).where('key', '=', key).executeTakeFirst()
      if (!stored) continue
      const expired = ageOf(stored.created_at) > IDEMPOTENCY_TTL_MS
      const abandoned = stored.status === 0 && ageOf(stored.created_at) > ABANDONED_AFTER_MS
      if (expired || abandoned) {
        await db.deleteFrom('idempotency_keys').where('workspace_id', '=', workspaceId).where('key', '=', key).where('created_at', '=', stored.created_at).execute()
        continue
      }
      if (stored.request_hash !== hash) {
        throw new AppError('idempotency-key-reused', `The Idempotency-Key "${key}" was used with a different request; use a new key for a new request.`)
      }
      if (stored.status === 0) throw new AppError('conflict', `A request with the Idempotency-Key "${key}" is still being carried out; retry shortly.`, undefined, { 'retry-after': '1' })
      const headers = JSON.parse(stored.headers) as Record<string, string>
      return reply.code(stored.status).headers(headers).header('idempotent-replayed', 'true').send(stored.body)
    }
    throw new AppError('conflict', `The Idempotency-Key "${key}" is contended; retry shortly.`, undefined, { 'retry-after': '1' })
  }

  const storeResponse = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const key = request.idempotencyKey
    if (key === undefined) return payload
    request.idempotencyKey = undefined
    const { workspaceId } = request.principal
    const where = db.deleteFrom('idempotency_keys').where('workspace_id', '=', workspaceId).where('key', '=', key)
    // A fault on our side is not a result: let a retry carry the request out again.
    if (reply.statusCode >= 500 || typeof payload !== 'string') {
      await where.execute()
      return payload
    }
    const headers = Object.fromEntries(REPLAYED_HEADERS.flatMap((name) => (reply.hasHeader(name) ? [[name, String(reply.getHeader(name))]] : [])))
    await db
      .updateTable('idempotency_keys')
      .set({ status: reply.statusCode, headers: JSON.stringify(headers), body: payload })
      .where('workspace_id', '=', workspaceId)
      .where('key', '=', key)
      .execute()
    return payload
  }

  app.addHook('onRoute', (route) => {
    if (!route.config?.idempotent) return
    route.preHandler = [...[route.preHandler ?? []].flat(), replayOrClaim]
    route.onSend = [...[route.onSend ?? []].flat(), storeResponse]
  })
}
