// Credential storage, scoped to one workspace. Secrets are sealed by the vault before they reach the database
// and opened only by readSecret, for the parts of the service that call an agent.
import type { Kysely, Selectable } from 'kysely'
import type { Database } from '../db/database.js'
import { newId, now } from '../ids.js'
import { openWithRing, type Vault } from './vault.js'
import type { Credential, CreateCredentialBody, UpdateCredentialBody } from './schemas.js'
import type { CredentialTable } from './credentials.table.js'

export type { CredentialTable }

type CredentialRow = Selectable<CredentialTable>

const PUBLIC_COLUMNS = ['id', 'name', 'hint', 'created_at', 'updated_at'] as const

function toCredential(row: Pick<CredentialRow, (typeof PUBLIC_COLUMNS)[number]>): Credential {
  return { id: row.id, name: row.name, hint: row.hint, createdAt: row.created_at, updatedAt: row.updated_at }
}

/** "…" and the last 4 characters (code points), or "…" alone under 12 characters. */
export function hintOf(secret: string): string {
  const characters = Array.from(secret)
  return characters.length < 12 ? '…' : `…${characters.slice(-4).join('')}`
}

export async function insertCredential(db: Kysely<Database>, vault: Vault, workspaceId: string, body: CreateCredentialBody): Promise<Credential> {
  const id = newId()
  const sealed = vault.seal(body.secret, id)
  const at = now()
  const row: CredentialRow = { id, workspace_id: workspaceId, name: body.name, hint: hintOf(body.secret), key_id: sealed.keyId, ciphertext: sealed.ciphertext, created_at: at, updated_at: at }
  await db.insertInto('credentials').values(row).execute()
  return toCredential(row)
}

export async function findCredential(db: Kysely<Database>, workspaceId: string, id: string): Promise<Credential | undefined> {
  const row = await db.selectFrom('credentials').select(PUBLIC_COLUMNS).where('id', '=', id.toLowerCase()).where('workspace_id', '=', workspaceId).executeTakeFirst()
  return row && toCredential(row)
}

export async function listCredentials(db: Kysely<Database>, workspaceId: string, limit: number, after?: string): Promise<Credential[]> {
  let query = db.selectFrom('credentials').select(PUBLIC_COLUMNS).where('workspace_id', '=', workspaceId)
  if (after) query = query.where('id', '>', after)
  return (await query.orderBy('id').limit(limit).execute()).map(toCredential)
}

export async function updateCredential(
  db: Kysely<Database>,
  vault: Vault,
  workspaceId: string,
  id: string,
  patch: UpdateCredentialBody,
): Promise<Credential | undefined> {
  const key = id.toLowerCase()
  const sealed = patch.secret === undefined ? undefined : vault.seal(patch.secret, key)
  const row = await db
    .updateTable('credentials')
    .set({
      ...(patch.name !== undefined ? { name: patch.name } : {}),
      ...(sealed && patch.secret !== undefined ? { hint: hintOf(patch.secret), key_id: sealed.keyId, ciphertext: sealed.ciphertext } : {}),
      updated_at: now(),
    })
    .where('id', '=', key)
    .where('workspace_id', '=', workspaceId)
    .returning(PUBLIC_COLUMNS)
    .executeTakeFirst()
  return row && toCredential(row)
}

export async function deleteCredential(db: Kysely<Database>, workspaceId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('credentials').where('id', '=', id.toLowerCase()).where('workspace_id', '=', workspaceId).executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

/**
 * The credential's secret, decrypted; null when no such credential exists in that workspace. Throws a
 * VaultError (whose message names the key id, never the secret) when no key of this process opens it.
 */
export async function readSecret(db: Kysely<Database>, workspaceId: string, credentialId: string): Promise<string | null> {
  const row = await db
    .selectFrom('credentials')
    .select(['id', 'key_id', 'ciphertext'])
    .where('id', '=', credentialId.toLowerCase())
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirst()
  return row ? openWithRing({ keyId: row.key_id, ciphertext: row.ciphertext }, row.id) : null
}
