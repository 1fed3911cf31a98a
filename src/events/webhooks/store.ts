// Webhook subscriptions (secrets sealed by the vault) and their deliveries. Matching deliveries are created
// by appendEvent, in the transaction of the change, with the job that sends them.
import type { Expression, Kysely, Selectable } from 'kysely'
import type { Database } from '../../db/database.js'
import { prepared } from '../../db/prepared.js'
import { newId, now } from '../../ids.js'
import { enqueueJob } from '../../jobs/index.js'
import { childOfStored } from '../../http/trace.js'
import type { Sealed } from '../../credentials/vault.js'
import type { StreamEvent } from '../schemas.js'
import type { CreateWebhookBody, UpdateWebhookBody, Webhook, WebhookDelivery } from './schemas.js'
import type { WebhookTable, WebhookDeliveryTable } from './webhooks.table.js'

export type { WebhookTable, WebhookDeliveryTable }



export type WebhookRow = Selectable<WebhookTable>
export type DeliveryRow = Selectable<WebhookDeliveryTable>

export const DELIVER_WEBHOOK_JOB = 'webhook.deliver' as const
export const deliveryJobKey = (deliveryId: string) => `webhook-delivery:${deliveryId}`

export function toWebhook(row: WebhookRow): Webhook {
  return {
    id: row.id,
    url: row.url,
    events: JSON.parse(row.events),
    streamId: row.stream_id,
    description: row.description,
    enabled: Boolean(Number(row.enabled)),
    disabledReason: row.disabled_reason,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

function toDelivery(row: DeliveryRow): WebhookDelivery {
  return {
    id: row.id,
    eventId: String(row.event_id),
    streamId: row.stream_id,
    type: row.type,
    status: row.status,
    attempts: Number(row.attempts),
    lastStatus: row.last_status === null ? null : Number(row.last_status),
    lastError: row.last_error,
    nextAttemptAt: row.next_attempt_at,
    createdAt: row.created_at,
  }
}

export async function insertWebhook(
  db: Kysely<Database>,
  input: { id: string; workspaceId: string; body: CreateWebhookBody; secret: Sealed },
): Promise<Webhook> {
  const at = now()
  const row: WebhookRow = {
    id: input.id,
    workspace_id: input.workspaceId,
    url: input.body.url,
    events: JSON.stringify(input.body.events),
    stream_id: input.body.streamId?.toLowerCase() ?? null,
    description: input.body.description ?? null,
    enabled: 1,
    disabled_reason: null,
    consecutive_failures: 0,
    secret_key_id: input.secret.keyId,
    secret_ciphertext: input.secret.ciphertext,
    created_at: at,
    updated_at: at,
  }
  await db.insertInto('webhooks').values(row).execute()
  return toWebhook(row)
}

export async function findWebhookRow(db: Kysely<Database>, workspaceId: string, id: string): Promise<WebhookRow | undefined> {
  return db.selectFrom('webhooks').selectAll().where('id', '=', id.toLowerCase()).where('workspace_id', '=', workspaceId).executeTakeFirst()
}

export async function listWebhooks(db: Kysely<Database>, workspaceId: string, limit: number, after?: string): Promise<Webhook[]> {
  let query = db.selectFrom('webhooks').selectAll().where('workspace_id', '=', workspaceId)
  if (after) query = query.where('id', '>', after)
  return (await query.orderBy('id').limit(limit).execute()).map(toWebhook)
}

export async function updateWebhook(db: Kysely<Database>, workspaceId: string, id: string, body: UpdateWebhookBody): Promise<Webhook | undefined> {
  const changes: Partial<WebhookTable> = { updated_at: now() }
  if (body.url !== undefined) changes.url = body.url
  if (body.events !== undefined) changes.events = JSON.stringify(body.events)
  if (body.description !== undefined) changes.description = body.description
  if (body.enabled !== undefined) {
    changes.enabled = body.enabled ? 1 : 0
    // Enabling again starts the failure count afresh; disabling by hand says so.
    changes.disabled_reason = body.enabled ? null : 'disabled by an admin'
    if (body.enabled) changes.consecutive_failures = 0
  }
  const row = await db
    .updateTable('webhooks')
    .set(changes)
    .where('id', '=', id.toLowerCase())
    .where('workspace_id', '=', workspaceId)
    .returningAll()
    .executeTakeFirst()
  return row && toWebhook(row)
}

export async function replaceWebhookSecret(db: Kysely<Database>, workspaceId: string, id: string, secret: Sealed): Promise<Webhook | undefined> {
  const row = await db
    .updateTable('webhooks')
    .set({ secret_key_id: secret.keyId, secret_ciphertext: secret.ciphertext, updated_at: now() })
    .where('id', '=', id.toLowerCase())
    .where('workspace_id', '=', workspaceId)
    .returningAll()
    .executeTakeFirst()
  return row && toWebhook(row)
}

export async function deleteWebhook(db: Kysely<Database>, workspaceId: string, id: string): Promise<boolean> {
  await db.deleteFrom('webhook_deliveries').where('webhook_id', '=', id.toLowerCase()).where('workspace_id', '=', workspaceId).execute()
  const result = await db.deleteFrom('webhooks').where('id', '=', id.toLowerCase()).where('workspace_id', '=', workspaceId).executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

export async function listDeliveries(db: Kysely<Database>, webhookId: string, limit: number, after?: string): Promise<WebhookDelivery[]> {
  let query = db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhookId)
  if (after) query = query.where('id', '>', after)
  return (await query.orderBy('id').limit(limit).execute()).map(toDelivery)
}

/** An enabled subscription as scheduleDeliveries matches it (`events`: its JSON text). */
export interface Subscription {
  id: string
  events: string
  stream_id: string | null
}

// Run by every event of every change: compiled once.
const selectSubscriptions = prepared(1, (db, workspaceId: Expression<string>) =>
  db.selectFrom('webhooks').select(['id', 'events', 'stream_id']).where('workspace_id', '=', workspaceId).where('enabled', '=', 1),
)

/**
 * Creates a delivery, and the job that sends it, for every enabled subscription of the workspace that wants
 * this event. Called by appendEvent inside the transaction of the change; each delivery is a span of the
 * change's trace (none when it has none).
 */
export async function scheduleDeliveries(
  db: Kysely<Database>,
  workspaceId: string,
  event: StreamEvent,
  traceparent: string | null,
  subscriptions?: Subscription[],
): Promise<void> {
  const candidates = subscriptions ?? (await selectSubscriptions(db, workspaceId))
  const at = now()
  for (const webhook of candidates) {
    if (webhook.stream_id !== null && webhook.stream_id !== event.streamId) continue
    const wanted = JSON.parse(webhook.events) as string[]
    if (!wanted.includes('*') && !wanted.includes(event.type)) continue
    const id = newId()
    await db
      .insertInto('webhook_deliveries')
      .values({
        id,
        webhook_id: webhook.id,
        workspace_id: workspaceId,
        stream_id: event.streamId,
        event_id: Number(event.id),
        type: event.type,
        payload: JSON.stringify(event),
        status: 'pending',
        attempts: 0,
        last_status: null,
        last_error: null,
        next_attempt_at: at,
        attempt_started_at: null,
        traceparent: childOfStored(traceparent),
        created_at: at,
        updated_at: at,
      })
      .execute()
    await enqueueJob(db, DELIVER_WEBHOOK_JOB, { deliveryId: id }, { jobKey: deliveryJobKey(id) })
  }
}

/**
 * Pending deliveries whose job seems lost: due for longer than `graceMs` and not attempted since, or attempted
 * so long ago that the attempt must have died with its process (an attempt never outlives its time-out). Their
 * job is enqueued again under the same key: a job still waiting is only replaced; a duplicate of one still
 * running is harmless (an attempt is recorded only once, and receivers dedupe on webhook-id).
 */
export async function requeueStalledDeliveries(db: Kysely<Database>, graceMs: number): Promise<number> {
  const cutoff = new Date(Date.now() - graceMs).toISOString()
  const stalled = await db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<', cutoff)
    .where((eb) => eb.or([eb('attempt_started_at', 'is', null), eb('attempt_started_at', '<', eb.ref('next_attempt_at')), eb('attempt_started_at', '<', cutoff)]))
    .orderBy('next_attempt_at')
    .limit(500)
    .execute()
  for (const { id } of stalled) {
    await db.transaction().execute((trx) => enqueueJob(trx, DELIVER_WEBHOOK_JOB, { deliveryId: id }, { jobKey: deliveryJobKey(id) }))
  }
  return stalled.length
}
