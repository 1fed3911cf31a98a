// /api/webhooks: subscriptions to a workspace's events (admins only), their secrets and their deliveries.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { IdParams, Page, PageQuery, ProblemResponses } from '../../http/schemas.js'
import { decodeCursor, toPage } from '../../http/pagination.js'
import { AppError, notFound } from '../../http/problem.js'
import { CreateWebhookBody, UpdateWebhookBody, Webhook, WebhookDelivery, WebhookWithSecret } from './schemas.js'
import { deleteWebhook, findWebhookRow, listDeliveries, listWebhooks, toWebhook, updateWebhook } from './store.js'
import { createWebhook, rotateWebhookSecret } from './service.js'
import { startStalledDeliverySweep } from './delivery.js'

const ADMIN_ONLY = 'manage webhook subscriptions'
const STALLED_SWEEP_MS = 10_000

export const webhookRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.database
  const { vault } = app
  if (app.config.workers > 0) {
    const sweep = startStalledDeliverySweep(app, STALLED_SWEEP_MS)
    app.addHook('onClose', async () => sweep.stop())
  }

  app.post(
    '/webhooks',
    {
      // The secret is not kept in the stored answer: a replay answers the subscription without it.
      config: { idempotent: true, adminOnly: ADMIN_ONLY, withheldOnReplay: ['secret'] },
      schema: {
        tags: ['webhooks'],
        operationId: 'createWebhook',
        summary: 'Subscribe a URL to events (admins); the secret is shown only here',
        description:
          'Honours `Idempotency-Key`. The secret is shown in this answer only and never stored outside the vault: a replay of the same request ' +
          '(`Idempotent-Replayed: true`) answers the subscription without `secret`; `rotate-secret` gives a new one.',
        body: CreateWebhookBody,
        response: { 201: WebhookWithSecret, ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const { workspaceId } = request.principal
      if (request.body.events.includes('*') && request.body.events.length > 1) {
        throw new AppError('validation-error', 'The body has 1 problem; see errors.', [{ pointer: '/events', detail: 'must be ["*"] alone or a list of event types' }])
      }
      reply.code(201)
      const webhook = await reply.withTransaction(async (trx) => {
        const created = await createWebhook({ vault }, trx, workspaceId, request.body)
        reply.header('location', `/api/webhooks/${created.id}`)
        return created
      })
      return reply.send(webhook)
    },
  )

  app.get(
    '/webhooks',
    {
      config: { adminOnly: ADMIN_ONLY },
      schema: { tags: ['webhooks'], operationId: 'listWebhooks', summary: 'List webhook subscriptions (admins)', querystring: PageQuery, response: { 200: Page(Webhook), ...ProblemResponses } },
    },
    async (request) => {
      const limit = request.query.limit ?? 50
      return toPage(await listWebhooks(db, request.principal.workspaceId, limit + 1, decodeCursor(request.query.cursor)), limit)
    },
  )

  app.get(
    '/webhooks/:id',
    {
      config: { adminOnly: ADMIN_ONLY },
      schema: { tags: ['webhooks'], operationId: 'getWebhook', summary: 'Read a webhook subscription (admins)', params: IdParams, response: { 200: Webhook, ...ProblemResponses } },
    },
    async (request) => {
      const row = await findWebhookRow(db, request.principal.workspaceId, request.params.id)
      if (!row) throw notFound('Webhook')
      return toWebhook(row)
    },
  )

  app.patch(
    '/webhooks/:id',
    {
      config: { adminOnly: ADMIN_ONLY },
      schema: {
        tags: ['webhooks'],
        operationId: 'updateWebhook',
        summary: 'Change a subscription (admins); enabling it again clears its failure count',
        params: IdParams,
        body: UpdateWebhookBody,
        response: { 200: Webhook, ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const { events } = request.body
      if (events && events.includes('*') && events.length > 1) {
        throw new AppError('validation-error', 'The body has 1 problem; see errors.', [{ pointer: '/events', detail: 'must be ["*"] alone or a list of event types' }])
      }
      const webhook = await reply.withTransaction((trx) => updateWebhook(trx, request.principal.workspaceId, request.params.id, request.body))
      if (!webhook) throw notFound('Webhook')
      return webhook
    },
  )

  app.delete(
    '/webhooks/:id',
    {
      config: { adminOnly: ADMIN_ONLY },
      schema: { tags: ['webhooks'], operationId: 'deleteWebhook', summary: 'Delete a subscription and its deliveries (admins)', params: IdParams, response: { 204: Type.Null({ description: 'Deleted; no body' }), ...ProblemResponses } },
    },
    async (request, reply) => {
      const deleted = await reply.withTransaction((trx) => deleteWebhook(trx, request.principal.workspaceId, request.params.id))
      if (!deleted) throw notFound('Webhook')
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/webhooks/:id/rotate-secret',
    {
      config: { adminOnly: ADMIN_ONLY },
      schema: {
        tags: ['webhooks'],
        operationId: 'rotateWebhookSecret',
        summary: 'Replace the signing secret (admins); the new secret is shown only here and signs from now on',
        params: IdParams,
        response: { 200: WebhookWithSecret, ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const webhook = await reply.withTransaction((trx) => rotateWebhookSecret({ vault }, trx, request.principal.workspaceId, request.params.id.toLowerCase()))
      if (!webhook) throw notFound('Webhook')
      return webhook
    },
  )

  app.get(
    '/webhooks/:id/deliveries',
    {
      config: { adminOnly: ADMIN_ONLY },
      schema: {
        tags: ['webhooks'],
        operationId: 'listWebhookDeliveries',
        summary: "A subscription's deliveries, oldest first (admins)",
        params: IdParams,
        querystring: PageQuery,
        response: { 200: Page(WebhookDelivery), ...ProblemResponses },
      },
    },
    async (request) => {
      const row = await findWebhookRow(db, request.principal.workspaceId, request.params.id)
      if (!row) throw notFound('Webhook')
      const limit = request.query.limit ?? 50
      return toPage(await listDeliveries(db, row.id, limit + 1, decodeCursor(request.query.cursor)), limit)
    },
  )
}
