// MCP sessions in the database, so that any instance serves any request of a session: opened by `initialize`,
// bound to the API key that opened it (by its hash), ended by DELETE, by idleness, or as the least recently used
// past MAX_SESSIONS_PER_KEY. Also where a session's resource subscriptions live (any instance's GET stream reads them).
import { createHash, randomUUID } from 'node:crypto'
import { PostgresAdapter, type Kysely } from 'kysely'
import type { Database } from '../db/database.js'

/** Sessions one API key may hold; a new one ends the least recently used. */
export const MAX_SESSIONS_PER_KEY = 100
/** Resource subscriptions one session may hold. */
export const MAX_SUBSCRIPTIONS = 100
/** last_used_at is written at most this often per session (a busy session costs no write per request). */
const TOUCH_EVERY_MS = 60_000

export interface McpSession {
  id: string
  workspaceId: string
  principalId: string
  protocolVersion: string
  subscriptions: string[]
  lastUsedAt: string
}

/** What binds a session to its key: the key's sha256, or `local` for a key-less loopback request in local mode. */
export const keyHashOf = (authorization: string | undefined) => {
  const key = /^Bearer +(\S+) *$/i.exec(authorization ?? '')?.[1]
  return key ? createHash('sha256').update(key).digest('hex') : 'local'
}

export async function openSession(db: Kysely<Database>, input: { workspaceId: string; principalId: string; keyHash: string; protocolVersion: string }): Promise<string> {
  const id = randomUUID()
  const at = new Date().toISOString()
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('mcp_sessions').values({ id, workspace_id: input.workspaceId, principal_id: input.principalId, key_hash: input.keyHash, protocol_version: input.protocolVersion, subscriptions: '[]', created_at: at, last_used_at: at }).execute()
    const kept = await trx.selectFrom('mcp_sessions').select('id').where('key_hash', '=', input.keyHash).orderBy('last_used_at', 'desc').orderBy('id', 'desc').limit(MAX_SESSIONS_PER_KEY).execute()
    if (kept.length === MAX_SESSIONS_PER_KEY) await trx.deleteFrom('mcp_sessions').where('key_hash', '=', input.keyHash).where('id', 'not in', kept.map((k) => k.id)).execute()
  })
  return id
}

/** The session, if it exists, belongs to this key and was used within idleMs (then it is marked used); else null. */
export async function findSession(db: Kysely<Database>, id: string, keyHash: string, idleMs: number): Promise<McpSession | null> {
  const row = await db.selectFrom('mcp_sessions').selectAll().where('id', '=', id).executeTakeFirst()
  if (!row || row.key_hash !== keyHash) return null
  const now = Date.now()
  const used = Date.parse(row.last_used_at)
  if (now - used > idleMs) {
    await db.deleteFrom('mcp_sessions').where('id', '=', id).execute()
    return null
  }
  if (now - used > TOUCH_EVERY_MS) await db.updateTable('mcp_sessions').set({ last_used_at: new Date(now).toISOString() }).where('id', '=', id).execute()
  return { id: row.id, workspaceId: row.workspace_id, principalId: row.principal_id, protocolVersion: row.protocol_version, subscriptions: JSON.parse(row.subscriptions) as string[], lastUsedAt: row.last_used_at }
}

export async function endSession(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom('mcp_sessions').where('id', '=', id).execute()
}

/** The session's subscriptions now (a GET stream on any instance reads them as events arrive). */
export async function subscriptionsOf(db: Kysely<Database>, id: string): Promise<Set<string> | null> {
  const row = await db.selectFrom('mcp_sessions').select('subscriptions').where('id', '=', id).executeTakeFirst()
  return row ? new Set(JSON.parse(row.subscriptions) as string[]) : null
}

/** Adds or removes a subscription; false when adding one past MAX_SUBSCRIPTIONS. */
export async function changeSubscription(db: Kysely<Database>, id: string, uri: string, subscribe: boolean): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const query = trx.selectFrom('mcp_sessions').select('subscriptions').where('id', '=', id)
    const row = await (trx.getExecutor().adapter instanceof PostgresAdapter ? query.forUpdate() : query).executeTakeFirst()
    if (!row) return true
    const uris = new Set(JSON.parse(row.subscriptions) as string[])
    if (subscribe) {
      if (!uris.has(uri) && uris.size >= MAX_SUBSCRIPTIONS) return false
      uris.add(uri)
    } else uris.delete(uri)
    await trx.updateTable('mcp_sessions').set({ subscriptions: JSON.stringify([...uris]) }).where('id', '=', id).execute()
    return true
  })
}
