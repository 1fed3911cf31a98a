// Idempotency keys on the POST routes that create (Stripe's semantics), scoped to the calling principal:
// the first request with a key is carried out and its response stored; a retry with the same key and body
// gets that response again (`Idempotent-Replayed: true`); the same key with another body is a 422; keys
// expire after 24 hours and are purged in batches.
//
// Atomicity: a route does its writes in `reply.withTransaction(trx => …)`. When the request carries a key,
// the serialised reply is stored in that same transaction, so a crash leaves both the resource and its
// stored response, or neither. The key's claim (the in-flight marker) is committed before the handler runs,
// so a concurrent retry gets a 409; a claim left by a crash is taken over once the instance that made it is
// known dead (src/failover/registry.ts: its heartbeat stopped), or else once it is older than the request
// time-out, and a claim that was taken over can no longer store a response (its transaction fails).
import { randomUUID } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Transaction } from 'kysely'
import type { Database } from '../db/database.js'
import { now } from '../ids.js'
import { runTransaction } from '../db/retry.js'
import { claimKey, findKey, purgeExpiredKeys, releaseKey, storeResponse, type KeyScope, type StoredResponse } from '../idempotency/store.js'
import { AppError } from './problem.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** POST routes that create: they honour Idempotency-Key (and must write in `reply.withTransaction`). */
    idempotent?: boolean
    /**
     * Top-level fields of the answer that hold a secret shown once (a webhook's `secret`): the stored answer is
     * kept without them, so no secret rests outside the vault, and a replay answers the resource without them.
     */
    withheldOnReplay?: string[]
  }
  interface FastifyRequest {
    /** The key this request holds, when it was sent with one. */
    idempotency?: Claim
  }
  interface FastifyReply {
    /**
     * Runs `work` in one database transaction and returns its result; on a request with an Idempotency-Key,
     * the reply (status and headers as set so far, `result` as the body) is stored in the same transaction.
     * After a deadlock or a serialization failure `work` runs again from the start (src/db/retry.ts): it must
     * have no effect outside the transaction but through afterCommit; after the last attempt, a 503.
     */
    withTransaction<T>(work: (trx: Transaction<Database>) => Promise<T>): Promise<T>
  }
}

interface Claim {
  scope: KeyScope
  id: string
  /** Settled: the response is stored (or the claim released); onSend has nothing more to do. */
  settled: boolean
}

export interface IdempotencyOptions {
  /** A claim older than this belongs to a request that died: it may be taken over. Longer than the request time-out. */
  abandonedAfterMs: number
  /** How often expired keys are purged (0: never; tests call purgeExpiredKeys themselves). */
  purgeEveryMs?: number
  /** The instances that carry requests out: a claim records its own, and one made by a dead instance is released. */
  holders?: { readonly id: string; isAlive(instanceId: string): Promise<boolean> }
}

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000
const KEY_FORM = /^[\x21-\x7e]{1,255}$/
const IdempotencyKeyHeader = {
  type: 'string',
  pattern: '^[\\x21-\\x7e]{1,255}$',
  description: '1 to 255 visible ASCII characters',
}
const REPLAYED_HEADERS = ['location', 'etag', 'content-type']
const JSON_TYPE = 'application/json; charset=utf-8'

/** Fault injection for the crash tests: the process kills itself at the named point. Never set in production. */
const FAULT = process.env.TANDEM_TEST_FAULT
const crashAt = (point: string) => {
  if (FAULT === point) process.kill(process.pid, 'SIGKILL')
}

const ageOf = (createdAt: string) => Date.now() - Date.parse(createdAt)

// Keyed: a body may hold a secret (POST /api/credentials), and the fingerprint is kept for a day.
function requestHash(request: FastifyRequest): string {
  return request.server.vault.fingerprint(`${request.method} ${request.url}\n${JSON.stringify(request.body)}`)
}

/** The answer as stored for replays: without the route's secret-bearing fields (see `withheldOnReplay`). */
function storedBody(reply: FastifyReply, serialized: string): string {
  const withheld = reply.request.routeOptions.config.withheldOnReplay
  if (!withheld || withheld.length === 0) return serialized
  const body = JSON.parse(serialized) as Record<string, unknown>
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return serialized
  for (const field of withheld) delete body[field]
  return JSON.stringify(body)
}

function replayedHeaders(reply: FastifyReply): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': JSON_TYPE }
  for (const name of REPLAYED_HEADERS) if (reply.hasHeader(name)) headers[name] = String(reply.getHeader(name))
  return headers
}

async function idempotency(app: FastifyInstance, options: IdempotencyOptions): Promise<void> {
  const { db } = app.database

  app.decorateReply('withTransaction', async function <T>(this: FastifyReply, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    const claim = this.request.idempotency
    const result = await runTransaction(db, async (trx) => {
      const result = await work(trx)
      if (claim && !claim.settled) {
        crashAt('idempotency:before-store')
        const response: StoredResponse = { status: this.statusCode, headers: replayedHeaders(this), body: storedBody(this, String(this.serialize(result))) }
        if (!(await storeResponse(trx, claim.scope, claim.id, response))) {
          throw new AppError('conflict', `The request with the Idempotency-Key "${claim.scope.key}" took too long and was taken over by a retry; nothing was changed.`)
        }
      }
      return result
    })
    if (claim) claim.settled = true
    crashAt('idempotency:after-commit')
    return result
  })

  const replayOrClaim = async (request: FastifyRequest, reply: FastifyReply) => {
    const key = request.headers['idempotency-key']
    if (key === undefined) return
    if (typeof key !== 'string' || !KEY_FORM.test(key)) {
      throw new AppError('validation-error', 'The headers have 1 problem; see errors.', [
        { pointer: '/headers/idempotency-key', detail: 'must be 1 to 255 visible ASCII characters' },
      ])
    }
    const scope: KeyScope = { workspaceId: request.principal.workspaceId, principalId: request.principal.principalId, key }
    const hash = requestHash(request)
    for (let attempt = 0; attempt < 2; attempt++) {
      const id = randomUUID()
      if (await claimKey(db, scope, { id, requestHash: hash, at: now(), instanceId: options.holders?.id ?? null })) {
        request.idempotency = { scope, id, settled: false }
        return
      }
      const stored = await findKey(db, scope)
      if (!stored) continue
      const expired = ageOf(stored.created_at) > IDEMPOTENCY_TTL_MS
      const abandoned =
        stored.status === 0 &&
        (ageOf(stored.created_at) > options.abandonedAfterMs || (stored.instance_id !== null && options.holders !== undefined && !(await options.holders.isAlive(stored.instance_id))))
      if (expired || abandoned) {
        await releaseKey(db, scope, stored.claim_id)
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

  // Outcomes the handler's transaction did not store: refusals (4xx) are stored, so a retry gets the same
  // answer; a fault on our side (5xx) releases the key so that a retry runs again.
  const storeOutcome = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const claim = request.idempotency
    if (!claim || claim.settled) return payload
    claim.settled = true
    if (reply.statusCode >= 500 || typeof payload !== 'string') {
      await releaseKey(db, claim.scope, claim.id)
      return payload
    }
    if (reply.statusCode < 300) request.log.error({ url: request.url }, 'an idempotent route answered without reply.withTransaction: its response is stored outside the transaction')
    await storeResponse(db, claim.scope, claim.id, { status: reply.statusCode, headers: replayedHeaders(reply), body: storedBody(reply, payload) })
    return payload
  }

  // Only on the routes declared `config: { idempotent: true }`: other routes pay nothing. The header is added
  // to the route's schema (in place, so the OpenAPI document sees it too): validated, and documented.
  app.addHook('onRoute', (route) => {
    if (!route.config?.idempotent) return
    const schema = (route.schema ??= {}) as { headers?: { type?: string; properties?: Record<string, unknown> } }
    schema.headers = { ...schema.headers, type: 'object', properties: { ...schema.headers?.properties, 'idempotency-key': IdempotencyKeyHeader } }
    route.preHandler = [...[route.preHandler ?? []].flat(), replayOrClaim]
    route.onSend = [...[route.onSend ?? []].flat(), storeOutcome]
  })

  if (options.purgeEveryMs) {
    const purge = () => {
      purgeExpiredKeys(db, new Date(Date.now() - IDEMPOTENCY_TTL_MS).toISOString()).catch((error) => app.log.warn({ err: error }, 'purging expired idempotency keys failed'))
    }
    const timer = setInterval(purge, options.purgeEveryMs).unref()
    app.addHook('onReady', async () => purge())
    app.addHook('onClose', async () => clearInterval(timer))
  }
}

export const idempotencyKeys = fp(idempotency, { name: 'tandem-idempotency', dependencies: ['tandem-auth', 'tandem-database', 'tandem-problems'] })
