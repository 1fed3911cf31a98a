// Sending a task's updates to its push configs, as Tandem's webhook engine sends events: a delivery row and its
// durable job are written in the transaction of the run's change (schedulePushes, from history.ts), and the job
// POSTs the update through the egress guard — `content-type: application/a2a+json`, the body the StreamResponse
// as ProtoJSON, `Authorization: <scheme> <credentials>` with authentication, `X-A2A-Notification-Token` with a
// token, and Standard Webhooks headers (webhook-id = the delivery id, the same on every attempt) signed with the
// token, else the credentials, else none. A 2xx succeeds; anything else (another status, a redirect — never
// followed —, a time-out, a refused address) is a failed attempt, retried after TANDEM_WEBHOOK_RETRY_BASE_MS ×
// 4^(n−1), up to MAX_PUSH_ATTEMPTS. Deliveries are independent: their order across retries is not kept, and a
// receiver that is down holds up nothing but its own deliveries.
import type { FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import { StreamResponse } from '@a2a-js/sdk'
import type { Database } from '../db/database.js'
import { enqueueJob, type JobHandler, type JobPayloads } from '../jobs/index.js'
import { newId, now } from '../ids.js'
import { MAX_ATTEMPT_ERROR_LENGTH, postWebhook, recordAttempt, type Attempt } from '../events/webhooks/post.js'
import { signerOf } from './push-signing.js'

declare module '../jobs/registry.js' {
  interface JobPayloads {
    'a2a.push': { deliveryId: string }
  }
}

export const PUSH_JOB = 'a2a.push' as const
export const MAX_PUSH_ATTEMPTS = 8
/** Finished deliveries kept per config (the latest); older ones go as new ones finish. */
export const MAX_FINISHED_PUSHES = 50
const pushJobKey = (deliveryId: string) => `a2a-push:${deliveryId}`

/** A delivery of each update to each push config of the run, with its job; in the caller's transaction. */
export async function schedulePushes(db: Kysely<Database>, runId: string, updates: StreamResponse[]): Promise<void> {
  if (updates.length === 0) return
  const configs = await db.selectFrom('a2a_push_configs').select('id').where('run_id', '=', runId).orderBy('id').execute()
  if (configs.length === 0) return
  const at = now()
  for (const update of updates) {
    const payload = JSON.stringify(StreamResponse.toJSON(update))
    for (const config of configs) {
      const id = newId()
      await db.insertInto('a2a_push_deliveries').values({
        id, config_row_id: config.id, run_id: runId, payload, status: 'pending', attempts: 0,
        last_status: null, last_error: null, next_attempt_at: at, created_at: at, updated_at: at,
      }).execute()
      await enqueueJob(db, PUSH_JOB, { deliveryId: id }, { jobKey: pushJobKey(id), newKey: true })
    }
  }
}

interface Secrets {
  token: string | null
  scheme: string | null
  credentials: string | null
}

async function post(app: FastifyInstance, url: string, deliveryId: string, payload: string, secrets: Secrets, shutdown: AbortSignal): Promise<Attempt> {
  const timestamp = new Date()
  const headers: Record<string, string> = {
    'content-type': 'application/a2a+json',
    'user-agent': 'Tandem-A2A/1',
    'webhook-id': deliveryId,
    'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
  }
  if (secrets.scheme && secrets.credentials) headers.authorization = `${secrets.scheme} ${secrets.credentials}`
  if (secrets.token) headers['x-a2a-notification-token'] = secrets.token
  const key = secrets.token ?? secrets.credentials
  const signer = key ? signerOf(key) : null
  if (signer) headers['webhook-signature'] = signer.sign(deliveryId, timestamp, payload)
  return postWebhook(app, url, headers, payload, shutdown)
}

/** Keeps the config's latest MAX_FINISHED_PUSHES finished deliveries (ids are time-ordered): the rest go. */
async function pruneFinished(trx: Kysely<Database>, configRowId: string): Promise<void> {
  const older = await trx.selectFrom('a2a_push_deliveries').select('id')
    .where('config_row_id', '=', configRowId).where('status', '!=', 'pending')
    .orderBy('id', 'desc').limit(MAX_FINISHED_PUSHES).offset(MAX_FINISHED_PUSHES).execute()
  if (older.length > 0) await trx.deleteFrom('a2a_push_deliveries').where('id', 'in', older.map((r) => r.id)).execute()
}

/** One attempt of a delivery still pending (its config may have been deleted since: then nothing), and its outcome. */
async function attemptPush(app: FastifyInstance, deliveryId: string, shutdown: AbortSignal): Promise<void> {
  const { db } = app.database
  const delivery = await db.selectFrom('a2a_push_deliveries').selectAll().where('id', '=', deliveryId).executeTakeFirst()
  if (!delivery || delivery.status !== 'pending') return
  const config = await db.selectFrom('a2a_push_configs').selectAll().where('id', '=', delivery.config_row_id).executeTakeFirst()
  if (!config) return
  const attempts = Number(delivery.attempts)
  let outcome: Attempt
  try {
    const open = (keyId: string | null, ciphertext: string | null) => (keyId && ciphertext ? app.vault.open({ keyId, ciphertext }, config.id) : null)
    const secrets = { token: open(config.token_key_id, config.token_ciphertext), scheme: config.auth_scheme, credentials: open(config.credentials_key_id, config.credentials_ciphertext) }
    outcome = await post(app, config.url, delivery.id, delivery.payload, secrets, shutdown)
  } catch (error) {
    if (shutdown.aborted) throw error
    outcome = { ok: false, status: null, error: (error as Error).message }
  }
  await db.transaction().execute(async (trx) => {
    const settings = {
      maxAttempts: MAX_PUSH_ATTEMPTS,
      retryBaseMs: app.config.webhookRetryBaseMs,
      retry: async (runAt: Date) => enqueueJob(trx, PUSH_JOB, { deliveryId: delivery.id }, { runAt, jobKey: pushJobKey(delivery.id) }),
    }
    const recorded = await recordAttempt(trx, 'a2a_push_deliveries', { id: delivery.id, attempts }, outcome, settings)
    if (recorded === 'succeeded' || recorded === 'failed') await pruneFinished(trx, config.id)
    if (recorded === 'failed' && !outcome.ok) {
      app.log.warn({ deliveryId: delivery.id, taskId: delivery.run_id, error: outcome.error.slice(0, MAX_ATTEMPT_ERROR_LENGTH) }, 'an A2A push notification failed its last attempt')
    }
  })
}

/** The push notifications' part of the task list (src/task-list.ts). */
export const pushTasks: { [PUSH_JOB]: JobHandler<JobPayloads[typeof PUSH_JOB]> } = {
  [PUSH_JOB]: async ({ deliveryId }, { app, signal }) => attemptPush(app, deliveryId, signal),
}
