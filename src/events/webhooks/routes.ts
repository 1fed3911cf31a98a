// /api/webhooks: subscriptions to a workspace's events (admins only), their secrets and their deliveries.
import { randomBytes } from 'node:crypto'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { IdParams, Page, PageQuery, ProblemResponses } from '../../http/schemas.js'
import { decodeCursor, toPage } from '../../http/pagination.js'
import { AppError, notFound } from '../../http/problem.js'
import { newId } from '../../ids.js'
import { findStream } from '../../streams/store.js'
import { CreateWebhookBody, UpdateWebhookBody, Webhook, WebhookDelivery, WebhookWithSecret } from './schemas.js'
import { deleteWebhook, findWebhookRow, insertWebhook, listDeliveries, listWebhooks, replaceWebhookSecret, toWebhook, updateWebhook } from './store.js'
import { startStalledDeliverySweep } from './delivery.js'

const ADMIN_ONLY = 'manage webhook subscriptions'
const STALLED_SWEEP_MS = 10_000

/** A Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`

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
      config: { idempotent: true, adminOnly: ADMIN_ONLY },
      schema: {
        tags: ['webhooks'],
        operationId: 'createWebhook',
        summary: 'Subscribe a URL to events (admins); the secret is shown only here',
        body: CreateWebhookBody,
        response: { 201: WebhookWithSecret, ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const { workspaceId } = request.principal
      const { streamId } = request.body
      if (streamId && !(await findStream(db, workspaceId, streamId))) {
        throw new AppError('unprocessable', 'The subscription names a stream that does not exist.', [{ pointer: '/streamId', detail: 'is not a stream of this workspace' }])
      }
      if (request.body.events.includes('*') && request.body.events.length > 1) {
        throw new AppError('validation-error', 'The body has 1 problem; see errors.', [{ pointer: '/events', detail: 'must be ["*"] alone or a list of event types' }])
      }
      const id = newId()
      const secret = newSecret()
      const webhook = await db.transaction().execute((trx) => insertWebhook(trx, { id, workspaceId, body: request.body, secret: vault.seal(secret, id) }))
      return reply.code(201).header('location', `/api/webhooks/${id}`).send({ ...webhook, secret })
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
    async (request) => {
      const { events } = request.body
      if (events && events.includes('*') && events.length > 1) {
        throw new AppError('validation-error', 'The body has 1 problem; see errors.', [{ pointer: '/events', detail: 'must be ["*"] alone or a list of event types' }])
      }
      const webhook = await db.transaction().execute((trx) => updateWebhook(trx, request.principal.workspaceId, request.params.id, request.body))
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
      const deleted = await db.transaction().execute((trx) => deleteWebhook(trx, request.principal.workspaceId, request.params.id))
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
    async (request) => {
      const id = request.params.id.toLowerCase()
      const secret = newSecret()
      const webhook = await db.transaction().execute((trx) => replaceWebhookSecret(trx, request.principal.workspaceId, id, vault.seal(secret, id)))
      if (!webhook) throw notFound('Webhook')
      return { ...webhook, secret }
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
