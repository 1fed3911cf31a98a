// Inbound hooks (docs/operators.md "Inbound hooks"). `hookAdminRoutes` (under /api, admins): create, list, delete.
// `inboundHookRoutes` (under /hooks, no API key): POST /hooks/{hookId}, verified with the hook's own secret by
// the Standard Webhooks library, replay-safe by webhook-id, at most 64 KiB, rate-limited per hook. Nothing
// else answers under /hooks.
import { noCycleWarnings, WithWarnings } from '../triggers/no-cycle.js'
import type { FastifyError } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import rateLimit, { type FastifyRateLimitStoreCtor } from '@fastify/rate-limit'
import Type from 'typebox'
import { Webhook, WebhookVerificationError } from 'standardwebhooks'
import { IdParams, Problem, ProblemResponses, Timestamp, Uuid } from '../http/schemas.js'
import { jsonRulesParser } from '../http/json-body.js'
import { AppError, notFound } from '../http/problem.js'
import { StreamIdParams } from '../streams/schemas.js'
import { requireStream } from '../streams/store.js'
import { publicBase } from '../runs/tasks/payload.js'
import { receiveHookCall } from './receive.js'
import { invalid, MAX_INPUT_BYTES, requireRoomOnStream, TriggerName } from '../triggers/schemas.js'
import { deleteHook, findHook, hookSecret, insertHook, listHooks, toHook } from './store.js'

const ADMIN_ONLY = 'manage inbound hooks'
const MAX_WEBHOOK_ID = 255

const InboundHook = Type.Object(
  { id: Uuid, streamId: Uuid, triggerName: Type.String(), url: Type.String(), createdBy: Type.String(), createdAt: Timestamp },
  { title: 'InboundHook' },
)
const CreatedHook = Type.Object(
  { id: Uuid, streamId: Uuid, triggerName: Type.String(), url: Type.String(), createdBy: Type.String(), createdAt: Timestamp, secret: Type.String({ description: 'whsec_…: shown this once' }) },
  { title: 'CreatedInboundHook' },
)
const HookAnswer = Type.Object({ runs: Type.Array(Type.Object({ id: Uuid })) }, { title: 'InboundHookAnswer' })

export const hookAdminRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.database

  app.post(
    '/streams/:streamId/hooks',
    {
      // The secret is shown once: a replayed create answers the hook without it (rotate by a new hook).
      config: { idempotent: true, adminOnly: ADMIN_ONLY, withheldOnReplay: ['secret'] },
      schema: {
        operationId: 'createInboundHook', tags: ['hooks'], summary: 'Create an inbound hook that fires a stream trigger (admins)',
        description: 'Answers the hook\'s URL and its `whsec_` secret, shown this once. Calls to the URL need no API key: they are signed with the secret (Standard Webhooks). Answers `warnings` (`no-matching-cycle`) when no saved cycle of the stream has the trigger name.',
        params: StreamIdParams, body: Type.Object({ triggerName: TriggerName }, { additionalProperties: false, title: 'CreateInboundHook' }),
        response: { 201: WithWarnings(CreatedHook, 'CreatedInboundHookWithWarnings'), ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const { workspaceId, principalId } = request.principal
      const created = await reply.withTransaction(async (trx) => {
        const stream = await requireStream(trx, workspaceId, request.params.streamId)
        await requireRoomOnStream(trx, 'inbound_hooks', stream.id, 'inbound hooks')
        const hook = await insertHook(trx, app.vault, { workspaceId, streamId: stream.id, triggerName: request.body.triggerName, createdBy: principalId })
        return { ...hook, ...(await noCycleWarnings(trx, workspaceId, stream.id, request.body.triggerName)) }
      })
      return reply.code(201).send({ ...toHook(created.row, publicBase(app)), secret: created.secret, ...(created.warnings ? { warnings: created.warnings } : {}) })
    },
  )

  app.get(
    '/streams/:streamId/hooks',
    {
      config: { adminOnly: ADMIN_ONLY },
      schema: { operationId: 'listInboundHooks', tags: ['hooks'], summary: 'List the inbound hooks of a stream (admins; no secrets)', params: StreamIdParams, response: { 200: Type.Object({ data: Type.Array(InboundHook) }, { title: 'InboundHookList' }), ...ProblemResponses } },
    },
    async (request) => {
      const { workspaceId } = request.principal
      const stream = await requireStream(db, workspaceId, request.params.streamId)
      return { data: (await listHooks(db, workspaceId, stream.id)).map((row) => toHook(row, publicBase(app))) }
    },
  )

  app.delete(
    '/hooks/:id',
    {
      config: { adminOnly: ADMIN_ONLY },
      schema: { operationId: 'deleteInboundHook', tags: ['hooks'], summary: 'Delete an inbound hook (admins)', params: IdParams, response: { 204: Type.Null(), ...ProblemResponses } },
    },
    async (request, reply) => {
      if (!(await deleteHook(db, request.principal.workspaceId, request.params.id.toLowerCase()))) throw notFound('Inbound hook')
      return reply.code(204).send(null)
    },
  )
}

const rawBodies = new WeakMap<object, string>()

function headerOf(value: string | string[] | undefined): string {
  return Array.isArray(value) ? (value[0] ?? '') : (value ?? '')
}

/** The Standard Webhooks library's reasons, in the caller's words. */
function unverified(error: WebhookVerificationError): AppError {
  const reason = /timestamp too/i.test(error.message)
    ? 'its webhook-timestamp is more than 5 minutes away from this server\'s clock'
    : /invalid signature headers/i.test(error.message)
      ? 'its webhook-timestamp is not a number of seconds since 1970'
      : /header/i.test(error.message)
        ? 'it lacks a webhook-id, webhook-timestamp or webhook-signature header'
        : 'no webhook-signature matches the body signed with this hook\'s secret'
  return new AppError('unauthorized', `The call is not signed for this hook: ${reason}.`)
}

export const inboundHookRoutes = (options: { store?: FastifyRateLimitStoreCtor }): FastifyPluginAsyncTypebox => async (app) => {
  const { db } = app.database
  const limit = app.config.operators.hookRateLimit
  if (limit) {
    await app.register(rateLimit, {
      ...(options.store ? { store: options.store, skipOnError: true } : {}),
      global: false,
      hook: 'onRequest',
      errorResponseBuilder: (_request, context) => {
        const seconds = Math.max(1, Math.ceil(context.ttl / 1000))
        return new AppError('rate-limited', `This hook takes at most ${context.max} calls per ${context.after}; retry in ${seconds} s.`, undefined, { 'retry-after': String(seconds) })
      },
    })
  }
  // Fastify refuses a body past the route's bodyLimit, announced (content-length) or found while reading a
  // chunked one; its words name the app-wide limit, so the hook says its own. Anything else goes on to the
  // app's handler.
  app.setErrorHandler((error: FastifyError) => {
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') throw new AppError('payload-too-large', `The body must be at most 64 KiB (${MAX_INPUT_BYTES} bytes), the bound of a run's input.`)
    throw error
  })
  // The signature covers the exact bytes: the text is kept beside the parsed body. The body follows the API's
  // JSON rules (depth 64, no U+0000, numbers kept exact or refused), as any /api body does.
  app.removeAllContentTypeParsers()
  const parse = jsonRulesParser(app)
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    rawBodies.set(request, body as string)
    parse(request, body as string, done)
  })

  app.post(
    '/:hookId',
    {
      bodyLimit: MAX_INPUT_BYTES,
      ...(limit ? { config: { rateLimit: { max: limit.max, timeWindow: limit.windowMs, keyGenerator: (request: { params: unknown }) => `hook ${(request.params as { hookId: string }).hookId.toLowerCase()}` } } } : {}),
      schema: {
        operationId: 'callInboundHook', tags: ['hooks'], summary: 'Fire a stream trigger from another system (Standard Webhooks signature, no API key)',
        description: 'The body (a JSON object, at most 64 KiB) is the runs\' input. A webhook-id already answered in the last 24 hours gets that answer again (200) and starts nothing.',
        params: Type.Object({ hookId: Uuid }, { additionalProperties: false }),
        headers: Type.Object({ 'webhook-id': Type.Optional(Type.String()), 'webhook-timestamp': Type.Optional(Type.String()), 'webhook-signature': Type.Optional(Type.String()) }),
        body: Type.Object({}, { additionalProperties: true, description: 'any JSON object, at most 64 KiB: the runs\' input' }),
        response: { 200: HookAnswer, 202: HookAnswer, 400: Problem, 401: Problem, 404: Problem, 413: Problem, 415: Problem, 421: Problem, 429: Problem, 500: Problem },
      },
    },
    async (request, reply) => {
      const hook = await findHook(db, request.params.hookId.toLowerCase())
      if (!hook) throw notFound('Inbound hook')
      const raw = rawBodies.get(request) ?? ''
      const headers = { 'webhook-id': headerOf(request.headers['webhook-id']), 'webhook-timestamp': headerOf(request.headers['webhook-timestamp']), 'webhook-signature': headerOf(request.headers['webhook-signature']) }
      try {
        new Webhook(hookSecret(app.vault, hook)).verify(raw, headers)
      } catch (error) {
        if (error instanceof WebhookVerificationError) throw unverified(error)
        throw error
      }
      const webhookId = headers['webhook-id']
      if (webhookId.length > MAX_WEBHOOK_ID) throw invalid([{ pointer: '/headers/webhook-id', detail: `is longer than ${MAX_WEBHOOK_ID} characters` }], 'request')
      const outcome = await receiveHookCall({ settings: app.config.runs }, db, hook, webhookId, request.body as Record<string, unknown>)
      if (outcome.replayed) return reply.code(200).send(JSON.parse(outcome.answer) as { runs: Array<{ id: string }> })
      return reply.code(202).send(JSON.parse(outcome.answer) as { runs: Array<{ id: string }> })
    },
  )
}
