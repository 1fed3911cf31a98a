// Workspaces. Their API keys belong to principals (src/principals/store.ts, re-exported here for callers
// that made keys before principals existed).
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { newId, now } from '../ids.js'


export const DEFAULT_WORKSPACE = 'default'

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

export { createApiKey, findPrincipalByKey, hashKey, listApiKeys, revokeApiKey, type ApiKeyTable, type Principal, type Role } from '../principals/store.js'
