// Sending one webhook delivery (a durable job): POST the event, signed with Standard Webhooks headers
// (webhook-id = the delivery id, the same on every attempt). A 2xx succeeds; anything else — another status,
// a redirect (never followed), a time-out, a connection error, an address the egress guard refuses — is a
// failed attempt, recorded with its reason and retried after TANDEM_WEBHOOK_RETRY_BASE_MS × 4^(n−1), up to
// 8 attempts; then the delivery has failed. 50 failed deliveries in a row disable the subscription.
// The outcome of an attempt and the job of the next one are written in one transaction.
import type { FastifyInstance } from 'fastify'
import { Webhook as Signer } from 'standardwebhooks'
import { enqueueJob, type JobHandler, type JobPayloads } from '../../jobs/index.js'
import { now } from '../../ids.js'
import { childOfStored } from '../../http/trace.js'
import { MAX_ATTEMPT_ERROR_LENGTH, postWebhook, recordAttempt, type Attempt } from './post.js'
import { DELIVER_WEBHOOK_JOB, deliveryJobKey, requeueStalledDeliveries, type DeliveryRow, type WebhookRow } from './store.js'

declare module '../../jobs/registry.js' {
  interface JobPayloads {
    'webhook.deliver': { deliveryId: string }
  }
}

const MAX_ATTEMPTS = 8
const DISABLE_AFTER_FAILURES = 50


/** Each attempt is a span of its own under the delivery's; a delivery of an event with no known trace sends none. */
function traceHeader(stored: string | null): { traceparent?: string } {
  const traceparent = childOfStored(stored)
  return traceparent ? { traceparent } : {}
}

async function post(app: FastifyInstance, webhook: WebhookRow, delivery: DeliveryRow, secret: string, shutdown: AbortSignal): Promise<Attempt> {
  const timestamp = new Date()
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'Tandem-Webhooks/1',
    'webhook-id': delivery.id,
    'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
    'webhook-signature': new Signer(secret).sign(delivery.id, timestamp, delivery.payload),
    ...traceHeader(delivery.traceparent),
  }
  return postWebhook(app, webhook.url, headers, delivery.payload, shutdown)
}

/** Runs one attempt of a delivery, if it is still pending, and records its outcome. */
async function attemptDelivery(app: FastifyInstance, deliveryId: string, shutdown: AbortSignal): Promise<void> {
  const { db } = app.database
  const delivery = await db.selectFrom('webhook_deliveries').selectAll().where('id', '=', deliveryId).executeTakeFirst()
  if (!delivery || delivery.status !== 'pending') return
  const webhook = await db.selectFrom('webhooks').selectAll().where('id', '=', delivery.webhook_id).executeTakeFirst()
  if (!webhook) return
  const attempts = Number(delivery.attempts)
  if (!Number(webhook.enabled)) {
    await db
      .updateTable('webhook_deliveries')
      .set({ status: 'failed', last_error: 'the subscription was disabled before this delivery was sent', next_attempt_at: null, updated_at: now() })
      .where('id', '=', delivery.id)
      .where('status', '=', 'pending')
      .execute()
    return
  }
  await db.updateTable('webhook_deliveries').set({ attempt_started_at: now() }).where('id', '=', delivery.id).execute()
  let outcome: Attempt
  try {
    const secret = app.vault.open({ keyId: webhook.secret_key_id, ciphertext: webhook.secret_ciphertext }, webhook.id)
    outcome = await post(app, webhook, delivery, secret, shutdown)
  } catch (error) {
    if (shutdown.aborted) throw error
    outcome = { ok: false, status: null, error: (error as Error).message }
  }
  app.metrics.webhookDeliveries.inc({ outcome: outcome.ok ? 'succeeded' : attempts + 1 < MAX_ATTEMPTS ? 'retried' : 'failed' })
  await db.transaction().execute(async (trx) => {
    const settings = {
      maxAttempts: MAX_ATTEMPTS,
      retryBaseMs: app.config.webhookRetryBaseMs,
      retry: async (runAt: Date) => enqueueJob(trx, DELIVER_WEBHOOK_JOB, { deliveryId: delivery.id }, { runAt, jobKey: deliveryJobKey(delivery.id) }),
    }
    const recorded = await recordAttempt(trx, 'webhook_deliveries', { id: delivery.id, attempts }, outcome, settings)
    if (recorded === 'succeeded') await trx.updateTable('webhooks').set({ consecutive_failures: 0 }).where('id', '=', webhook.id).execute()
    if (recorded !== 'failed' || outcome.ok) return
    const counted = await trx
      .updateTable('webhooks')
      .set((eb) => ({ consecutive_failures: eb('consecutive_failures', '+', 1) }))
      .where('id', '=', webhook.id)
      .returning('consecutive_failures')
      .executeTakeFirst()
    if (Number(counted?.consecutive_failures) >= DISABLE_AFTER_FAILURES) {
      await trx
        .updateTable('webhooks')
        .set({ enabled: 0, disabled_reason: `disabled after ${DISABLE_AFTER_FAILURES} consecutive failed deliveries; the last: ${outcome.error.slice(0, MAX_ATTEMPT_ERROR_LENGTH)}`, updated_at: now() })
        .where('id', '=', webhook.id)
        .execute()
    }
  })
}

/** The webhooks' part of the task list (src/task-list.ts). */
export const webhookTasks: { [DELIVER_WEBHOOK_JOB]: JobHandler<JobPayloads[typeof DELIVER_WEBHOOK_JOB]> } = {
  [DELIVER_WEBHOOK_JOB]: async ({ deliveryId }, { app, signal }) => attemptDelivery(app, deliveryId, signal),
}

/** Every `everyMs`, re-enqueues deliveries whose job died with its process (see requeueStalledDeliveries). */
export function startStalledDeliverySweep(app: FastifyInstance, everyMs: number): { stop(): void } {
  const graceMs = app.config.webhookTimeoutMs + everyMs
  const timer = setInterval(() => {
    requeueStalledDeliveries(app.database.db, graceMs).then(
      (count) => count > 0 && app.log.warn({ count }, 'sent again webhook deliveries whose attempt was lost'),
      (error: unknown) => app.log.error({ err: error }, 'looking for lost webhook deliveries failed'),
    )
  }, everyMs)
  timer.unref()
  return { stop: () => clearInterval(timer) }
}
