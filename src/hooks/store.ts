// Inbound hooks: rows of `inbound_hooks` (the whsec_ secret sealed by the vault, the hook id as associated
// data) and the webhook-ids each has answered in the last 24 hours (`hook_receipts`).
import { randomBytes } from 'node:crypto'
import type { Kysely, Selectable } from 'kysely'
import type { Database } from '../db/database.js'
import type { Vault } from '../credentials/vault.js'
import type { InboundHookTable } from '../triggers/operators.table.js'
import { newId, now } from '../ids.js'

export type HookRow = Selectable<InboundHookTable>

/** A webhook-id answered within this window is answered again with the first answer, and starts nothing. */
export const REPLAY_WINDOW_MS = 24 * 60 * 60 * 1000

export interface InboundHook {
  id: string
  streamId: string
  triggerName: string
  url: string
  createdBy: string
  createdAt: string
}

export const hookUrl = (base: string, id: string) => `${base}/hooks/${id}`

export function toHook(row: HookRow, base: string): InboundHook {
  return { id: row.id, streamId: row.stream_id, triggerName: row.trigger_name, url: hookUrl(base, row.id), createdBy: row.created_by, createdAt: row.created_at }
}

/** A new hook with a fresh secret; the secret is returned this once. */
export async function insertHook(db: Kysely<Database>, vault: Vault, input: { workspaceId: string; streamId: string; triggerName: string; createdBy: string }): Promise<{ row: HookRow; secret: string }> {
  const id = newId()
  const secret = `whsec_${randomBytes(24).toString('base64')}`
  const sealed = vault.seal(secret, id)
  const row: HookRow = {
    id, workspace_id: input.workspaceId, stream_id: input.streamId, trigger_name: input.triggerName,
    secret_key_id: sealed.keyId, secret_ciphertext: sealed.ciphertext, created_by: input.createdBy, created_at: now(),
  }
  await db.insertInto('inbound_hooks').values(row).execute()
  return { row, secret }
}

export async function findHook(db: Kysely<Database>, id: string): Promise<HookRow | undefined> {
  return db.selectFrom('inbound_hooks').selectAll().where('id', '=', id).executeTakeFirst()
}

export async function listHooks(db: Kysely<Database>, workspaceId: string, streamId: string): Promise<HookRow[]> {
  return db.selectFrom('inbound_hooks').selectAll().where('workspace_id', '=', workspaceId).where('stream_id', '=', streamId).orderBy('id').execute()
}

export async function deleteHook(db: Kysely<Database>, workspaceId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('inbound_hooks').where('id', '=', id).where('workspace_id', '=', workspaceId).executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

export function hookSecret(vault: Vault, row: HookRow): string {
  return vault.open({ keyId: row.secret_key_id, ciphertext: row.secret_ciphertext }, row.id)
}

/**
 * Claims `webhookId` for the hook in the caller's transaction: true when it is new (the caller fires and then
 * records its answer), else the answer first given. Receipts older than the window are dropped first, so the
 * table holds a day of each hook's calls. On PostgreSQL a concurrent duplicate waits for the first to commit.
 */
export async function claimReceipt(db: Kysely<Database>, hookId: string, webhookId: string): Promise<true | { answer: string }> {
  await db.deleteFrom('hook_receipts').where('hook_id', '=', hookId).where('created_at', '<', new Date(Date.now() - REPLAY_WINDOW_MS).toISOString()).execute()
  const inserted = await db
    .insertInto('hook_receipts')
    .values({ hook_id: hookId, webhook_id: webhookId, answer: '', created_at: now() })
    .onConflict((oc) => oc.columns(['hook_id', 'webhook_id']).doNothing())
    .returning('hook_id')
    .executeTakeFirst()
  if (inserted) return true
  const first = await db.selectFrom('hook_receipts').select('answer').where('hook_id', '=', hookId).where('webhook_id', '=', webhookId).executeTakeFirstOrThrow()
  return { answer: first.answer }
}

export async function recordAnswer(db: Kysely<Database>, hookId: string, webhookId: string, answer: string): Promise<void> {
  await db.updateTable('hook_receipts').set({ answer }).where('hook_id', '=', hookId).where('webhook_id', '=', webhookId).execute()
}
