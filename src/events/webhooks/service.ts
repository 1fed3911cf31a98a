// The writes of webhook subscriptions, each in the caller's transaction (the route's reply.withTransaction):
// a route validates, calls one of these, and answers.
import { randomBytes } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Database } from '../../db/database.js'
import type { Vault } from '../../credentials/vault.js'
import { AppError } from '../../http/problem.js'
import { newId } from '../../ids.js'
import { findStream } from '../../streams/store.js'
import type { CreateWebhookBody, Webhook, WebhookWithSecret } from './schemas.js'
import { insertWebhook, replaceWebhookSecret } from './store.js'

/** A Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`

export interface WebhookDeps {
  vault: Vault
}

/** A new subscription and its secret (sealed by the vault in the row; in plain text only in this answer). */
export async function createWebhook(deps: WebhookDeps, trx: Kysely<Database>, workspaceId: string, body: CreateWebhookBody): Promise<WebhookWithSecret> {
  if (body.streamId && !(await findStream(trx, workspaceId, body.streamId))) {
    throw new AppError('unprocessable', 'The subscription names a stream that does not exist.', [{ pointer: '/streamId', detail: 'is not a stream of this workspace' }])
  }
  const id = newId()
  const secret = newSecret()
  const webhook: Webhook = await insertWebhook(trx, { id, workspaceId, body, secret: deps.vault.seal(secret, id) })
  return { ...webhook, secret }
}

/** A new secret for a subscription; undefined when it does not exist in the workspace. */
export async function rotateWebhookSecret(deps: WebhookDeps, trx: Kysely<Database>, workspaceId: string, id: string): Promise<WebhookWithSecret | undefined> {
  const secret = newSecret()
  const webhook = await replaceWebhookSecret(trx, workspaceId, id, deps.vault.seal(secret, id))
  return webhook && { ...webhook, secret }
}
