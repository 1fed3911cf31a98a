// Workspaces and their API keys. A key is shown once; only its SHA-256 hash is stored.
import { createHash, randomBytes } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { newId, now } from '../ids.js'
import type { Role } from './workspaces.table.js'

export type { Role }

export interface Principal {
  workspaceId: string
  principalId: string
  role: Role
}

export const DEFAULT_WORKSPACE = 'default'
const KEY_PREFIX = 'tdm_'

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex')
}

/** Returns the workspace's id, creating it when it does not exist (safe when several instances race). */
export async function ensureWorkspace(db: Kysely<Database>, name: string): Promise<string> {
  await db
    .insertInto('workspaces')
    .values({ id: newId(), name, created_at: now() })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute()
  const row = await db.selectFrom('workspaces').select('id').where('name', '=', name).executeTakeFirstOrThrow()
  return row.id
}

export async function createApiKey(
  db: Kysely<Database>,
  input: { workspaceId: string; name: string; role: Role },
): Promise<{ id: string; key: string; principalId: string }> {
  const key = KEY_PREFIX + randomBytes(32).toString('base64url')
  const id = newId()
  const principalId = newId()
  await db
    .insertInto('api_keys')
    .values({
      id,
      workspace_id: input.workspaceId,
      name: input.name,
      principal_id: principalId,
      role: input.role,
      key_hash: hashKey(key),
      created_at: now(),
      revoked_at: null,
    })
    .execute()
  return { id, key, principalId }
}

export async function revokeApiKey(db: Kysely<Database>, id: string): Promise<boolean> {
  const result = await db.updateTable('api_keys').set({ revoked_at: now() }).where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

export async function listApiKeys(db: Kysely<Database>) {
  return db
    .selectFrom('api_keys')
    .innerJoin('workspaces', 'workspaces.id', 'api_keys.workspace_id')
    .select(['api_keys.id', 'api_keys.name', 'api_keys.role', 'api_keys.principal_id', 'api_keys.created_at', 'api_keys.revoked_at', 'workspaces.name as workspace'])
    .orderBy('api_keys.id')
    .execute()
}

/** Looks a presented key up by its hash: no secret is ever compared byte by byte. */
export async function findPrincipalByKey(db: Kysely<Database>, key: string): Promise<Principal | undefined> {
  if (!key.startsWith(KEY_PREFIX)) return undefined
  const row = await db
    .selectFrom('api_keys')
    .select(['workspace_id', 'principal_id', 'role'])
    .where('key_hash', '=', hashKey(key))
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
  return row && { workspaceId: row.workspace_id, principalId: row.principal_id, role: row.role }
}
