// One POST of a webhook body to a receiver: run webhooks (delivery.ts) and A2A push notifications
// (src/a2a/push-delivery.ts) both send this way. Through the egress guard, no redirect followed, within the
// webhook time-out; only the status counts (the body is not read, so a receiver that streams garbage cannot hold
// us). A failure is an outcome with a reason in words, never a throw, except when the process is shutting down.
// recordAttempt writes an attempt's outcome on its delivery row the same way for both.
import type { FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import type { Database } from '../../db/database.js'
import { now } from '../../ids.js'
import { backoffMs } from '../../net/backoff.js'
import { deadline } from '../../net/deadline.js'

export type Attempt = { ok: true; status: number } | { ok: false; status: number | null; error: string }

function describeFailure(error: unknown, timedOut: boolean, timeoutMs: number): string {
  const cause = (error as { cause?: { code?: string; message?: string; name?: string } }).cause
  const denied = (error as Error).name === 'EgressDeniedError' ? (error as Error) : cause?.name === 'EgressDeniedError' ? cause : undefined
  if (denied) return `${denied.message} (egress guard; TANDEM_EGRESS_ALLOW opens ranges)`
  if (timedOut) return `no answer within ${timeoutMs} ms`
  return `the connection failed (${cause?.code ?? cause?.message ?? (error as Error).message})`
}

export async function postWebhook(app: FastifyInstance, url: string, headers: Record<string, string>, body: string, shutdown: AbortSignal): Promise<Attempt> {
  const timeoutMs = app.config.webhookTimeoutMs
  const limit = deadline(timeoutMs, shutdown)
  try {
    const response = await app.egress.fetch(url, { method: 'POST', headers, body, redirect: 'manual', signal: limit.signal })
    await response.body?.cancel().catch(() => undefined)
    if (response.status >= 200 && response.status < 300) return { ok: true, status: response.status }
    if (response.status >= 300 && response.status < 400) return { ok: false, status: response.status, error: `the endpoint answered ${response.status} (a redirect; redirects are not followed)` }
    return { ok: false, status: response.status, error: `the endpoint answered ${response.status}` }
  } catch (error) {
    if (shutdown.aborted) throw error
    return { ok: false, status: null, error: describeFailure(error, limit.expired, timeoutMs) }
  } finally {
    limit.clear()
  }
}

/** Tables of deliveries sent by postWebhook: each row's status, attempt count, last outcome and next attempt. */
export type DeliveryTable = 'webhook_deliveries' | 'a2a_push_deliveries'

/** A failed attempt's reason, as stored: at most this many characters. */
export const MAX_ATTEMPT_ERROR_LENGTH = 500

/**
 * Writes the outcome of attempt `attempts + 1` of a pending delivery, in the caller's transaction: `succeeded`;
 * `retried`, with the next attempt's time (TANDEM_WEBHOOK_RETRY_BASE_MS × 4^(n−1)) passed to `retry` to enqueue its
 * job; or, at the last attempt, `failed`. Written once: a duplicate job of the same attempt finds the count moved on,
 * writes nothing and gets `stale`, and the caller then does nothing either.
 */
export async function recordAttempt(
  trx: Kysely<Database>,
  table: DeliveryTable,
  delivery: { id: string; attempts: number },
  outcome: Attempt,
  settings: { maxAttempts: number; retryBaseMs: number; retry(runAt: Date): Promise<void> },
): Promise<'succeeded' | 'retried' | 'failed' | 'stale'> {
  const attempt = delivery.attempts + 1
  const at = now()
  const write = async (values: Record<string, unknown>) => {
    const updated = await trx
      .updateTable(table as 'webhook_deliveries')
      .set({ attempts: attempt, last_status: outcome.status, updated_at: at, ...values })
      .where('id', '=', delivery.id)
      .where('status', '=', 'pending')
      .where('attempts', '=', delivery.attempts)
      .executeTakeFirst()
    return Number(updated.numUpdatedRows) > 0
  }
  if (outcome.ok) return (await write({ status: 'succeeded', last_error: null, next_attempt_at: null })) ? 'succeeded' : 'stale'
  const error = outcome.error.slice(0, MAX_ATTEMPT_ERROR_LENGTH)
  if (attempt >= settings.maxAttempts) return (await write({ status: 'failed', last_error: error, next_attempt_at: null })) ? 'failed' : 'stale'
  const runAt = new Date(Date.now() + backoffMs({ baseMs: settings.retryBaseMs, factor: 4 }, attempt))
  if (!(await write({ last_error: error, next_attempt_at: runAt.toISOString() }))) return 'stale'
  await settings.retry(runAt)
  return 'retried'
}
