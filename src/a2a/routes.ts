// /a2a/cycles/{cycleId}: an exposed cycle's public Agent Card, and its JSON-RPC endpoint behind API keys (as /api:
// 401 without one, 403 for an agent key, 404 for another workspace's or an unexposed cycle). The SDK's JSON-RPC
// transport handler reads the request and writes the answer; TandemA2aHandler does the work on Tandem's tables.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRateLimitStoreCtor } from '@fastify/rate-limit'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { createHash } from 'node:crypto'
import Type from 'typebox'
import { AgentCard, type StreamResponse } from '@a2a-js/sdk'
import { JsonRpcTransportHandler, ServerCallContext, type A2ARequestHandler } from '@a2a-js/sdk/server'
import { A2AError, VersionNotSupportedError } from '@a2a-js/sdk/errors'
import { Uuid } from '../http/schemas.js'
import { AppError, notFound } from '../http/problem.js'
import { authentication } from '../principals/auth.js'
import { rateLimits } from '../http/rate-limit.js'
import { openEventStream } from '../http/event-stream.js'
import { traceparentFor } from '../http/trace.js'
import { toCycle } from '../cycles/store.js'
import type { SavedCycle } from '../cycles/schemas.js'
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { agentCardJson, publicBase } from './card.js'
import { TandemA2aHandler } from './handler.js'

const CycleIdParams = Type.Object({ cycleId: Uuid }, { additionalProperties: false })

/** The cycle if it is exposed (in this workspace when one is given). */
export async function exposedCycle(db: Kysely<Database>, cycleId: string, workspaceId?: string): Promise<SavedCycle | undefined> {
  let query = db.selectFrom('cycles').selectAll().where('id', '=', cycleId.toLowerCase())
  if (workspaceId) query = query.where('workspace_id', '=', workspaceId)
  const row = await query.executeTakeFirst()
  const cycle = row && toCycle(row)
  return cycle?.a2a?.exposed ? cycle : undefined
}

/** An `Origin` that is neither Tandem's own nor one of TANDEM_CORS_ORIGINS: a browser page of another site. */
function foreignOrigin(request: FastifyRequest): boolean {
  const origin = request.headers.origin
  if (origin === undefined) return false
  const own = [publicBase(request.server), request.server.listening.origin].filter(Boolean).map((o) => new URL(o as string).origin)
  const allowed = request.server.config.corsOrigins ?? []
  return !own.includes(origin) && !allowed.includes('*') && !allowed.includes(origin)
}

/**
 * Errors that are not the protocol's own reach the caller as a bare -32603 (their text may name internals); they
 * are logged instead.
 */
function guarded(handler: TandemA2aHandler, request: FastifyRequest): A2ARequestHandler {
  const hide = (error: unknown): never => {
    if (error instanceof A2AError) throw error
    request.log.error({ err: error }, 'an A2A method failed')
    throw new Error('Internal error.')
  }
  return new Proxy(handler, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver) as unknown
      if (typeof value !== 'function') return value
      if (name === 'sendMessageStream' || name === 'resubscribe') {
        return async function* (...args: unknown[]) {
          try {
            yield* (value as (...a: unknown[]) => AsyncGenerator<StreamResponse>).apply(target, args)
          } catch (error) {
            hide(error)
          }
        }
      }
      return async (...args: unknown[]) => {
        try {
          return await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args)
        } catch (error) {
          return hide(error)
        }
      }
    },
  }) as A2ARequestHandler
}

async function writeStream(request: FastifyRequest, reply: FastifyReply, events: AsyncGenerator<unknown>, abort: AbortController): Promise<void> {
  // The first answer (or the error that comes instead) decides: an error is a plain JSON-RPC answer, not a stream.
  const first = await events.next()
  const raw = openEventStream(request, reply)
  const keepAlive = setInterval(() => raw.write(': keep-alive\n\n'), request.server.config.sseKeepAliveMs)
  keepAlive.unref()
  raw.on('close', () => abort.abort())
  try {
    if (!first.done) raw.write(`data: ${JSON.stringify(first.value)}\n\n`)
    if (!first.done) {
      for await (const frame of { [Symbol.asyncIterator]: () => events }) {
        if (raw.destroyed) break
        raw.write(`data: ${JSON.stringify(frame)}\n\n`)
      }
    }
  } catch (error) {
    request.log.warn({ err: error }, 'an A2A stream ended with an error')
  } finally {
    clearInterval(keepAlive)
    raw.end()
  }
}

/** `store`: the rate-limit store of /api and /mcp (Redis when configured), so one budget holds for all three on every instance. */
export const a2aRoutes = (options: { defaultWorkspaceId: string; store?: FastifyRateLimitStoreCtor }): FastifyPluginAsyncTypebox => async (app) => {
  const { db } = app.database

  app.get(
    '/cycles/:cycleId/.well-known/agent-card.json',
    { schema: { tags: ['a2a'], operationId: 'getExposedAgentCard', summary: 'An exposed cycle\'s A2A Agent Card (public)', params: CycleIdParams } },
    async (request, reply) => {
      const cycle = await exposedCycle(db, request.params.cycleId)
      if (!cycle) throw notFound('Agent')
      const body = JSON.stringify(agentCardJson(app, cycle))
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`
      reply.header('cache-control', 'max-age=60').header('etag', etag)
      if (request.headers['if-none-match'] === etag) return reply.code(304).send()
      return reply.type('application/json; charset=utf-8').send(body)
    },
  )

  await app.register(async (keyed) => {
    if (app.config.rateLimit || app.config.peerRateLimit) await keyed.register(rateLimits, { perKey: app.config.rateLimit, perPeer: app.config.peerRateLimit, store: options.store })
    await keyed.register(authentication, { mode: app.config.auth, defaultWorkspaceId: options.defaultWorkspaceId })
    // The body as text: JSON-RPC answers a body that is not JSON with its own -32700, not a problem document.
    keyed.removeContentTypeParser(['application/json'])
    keyed.addContentTypeParser(['application/json', 'application/a2a+json'], { parseAs: 'string' }, (_request, body, done) => done(null, body))
    keyed.post(
      '/cycles/:cycleId',
      { schema: { tags: ['a2a'], operationId: 'callExposedAgent', summary: 'An exposed cycle\'s A2A JSON-RPC endpoint', params: CycleIdParams } },
      async (request, reply) => {
        if (foreignOrigin(request)) throw new AppError('forbidden', 'Requests from this Origin are refused: it is neither Tandem\'s own nor one of TANDEM_CORS_ORIGINS.')
        const cycle = await exposedCycle(db, (request.params as { cycleId: string }).cycleId, request.principal.workspaceId)
        if (!cycle) throw notFound('Agent')
        let body: Record<string, unknown> | undefined
        try {
          body = typeof request.body === 'string' ? (JSON.parse(request.body) as Record<string, unknown>) : undefined
        } catch {
          return { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'The body is not JSON.' } }
        }
        const version = request.headers['a2a-version']
        if (version !== '1.0') {
          const error = new VersionNotSupportedError(`A2A-Version ${version === undefined ? 'is absent (0.3)' : `"${String(version)}"`}: this agent speaks 1.0 only.`)
          return { jsonrpc: '2.0', id: (body?.id as string | number | undefined) ?? null, error: JsonRpcTransportHandler.mapToJSONRPCError(error) }
        }
        const abort = new AbortController()
        const card = AgentCard.fromJSON(agentCardJson(app, cycle))
        const handler = new TandemA2aHandler({ app, principal: request.principal, cycle, traceparent: traceparentFor(request), card, signal: abort.signal })
        const transport = new JsonRpcTransportHandler(guarded(handler, request))
        const answer = await transport.handle(body ?? '', new ServerCallContext({ requestedVersion: '1.0' }))
        if (Symbol.asyncIterator in answer) {
          const events = answer as AsyncGenerator<unknown>
          try {
            await writeStream(request, reply, events, abort)
          } catch (error) {
            const id = (body?.id as string | number | undefined) ?? null
            return { jsonrpc: '2.0', id, error: JsonRpcTransportHandler.mapToJSONRPCError(error) }
          }
          return reply
        }
        return answer
      },
    )
  })
}
