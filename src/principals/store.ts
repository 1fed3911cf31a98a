// Principals (who a key speaks for: a person or an agent, with a handle unique in the workspace) and their API
// keys. A key is shown once; only its SHA-256 hash is stored, and a presented key is looked up by that hash.
import { createHash, randomBytes } from 'node:crypto'
import type { Expression, Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { newId, now } from '../ids.js'
import { findAgent } from '../agents/store.js'
import { prepared } from '../db/prepared.js'
import { defaultHandle, isHandle, normalizeHandle } from './handles.js'

import type { ApiKeyTable, PrincipalTable, Role } from './principals.table.js'

export type { ApiKeyTable, PrincipalTable, Role }

export interface Principal {
  workspaceId: string
  principalId: string
  role: Role
  handle: string
  agentId: string | null
}

/** The principal id of the key-less local caller (a fixed UUIDv7-shaped id, so that authorship is stable). */
export const LOCAL_ADMIN_ID = '00000000-0000-7000-8000-000000000001'
export const LOCAL_HANDLE = 'local'
const KEY_PREFIX = 'tdm_'

/** A key that cannot be made as asked; the message says why (shown by the CLI). */
export class KeyRequestError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'KeyRequestError'
  }
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex')
}

function inTransaction<T>(db: Kysely<Database>, work: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  return db.isTransaction ? work(db) : db.transaction().execute(work)
}

/** The local admin of the default workspace holds the handle `local` there (so no one else can take it). */
export async function ensureLocalPrincipal(db: Kysely<Database>, workspaceId: string): Promise<void> {
  await db
    .insertInto('principals')
    .values({ id: LOCAL_ADMIN_ID, workspace_id: workspaceId, handle: LOCAL_HANDLE, role: 'admin', agent_id: null, created_at: now() })
    .onConflict((oc) => oc.doNothing())
    .execute()
}

export async function findPrincipalByHandle(db: Kysely<Database>, workspaceId: string, handle: string): Promise<Principal | undefined> {
  const row = await db
    .selectFrom('principals')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('handle', '=', normalizeHandle(handle))
    .executeTakeFirst()
  return row && { workspaceId: row.workspace_id, principalId: row.id, role: row.role, handle: row.handle, agentId: row.agent_id }
}

export interface KeyRequest {
  workspaceId: string
  name: string
  /** Defaults to `defaultHandle(name)`; an existing handle gets a new key for the same principal. */
  handle?: string
  /** For a new person: defaults to `member`. For an existing one: must match (or be left out); an admin's needs it, with `handle`. */
  role?: 'admin' | 'member'
  /** An agent key: the agent (of that workspace) it acts for. */
  agentId?: string
}

// The principal a new key belongs to: the handle's, or a new one. Refuses what would change who a handle is.
async function principalForKey(trx: Kysely<Database>, request: KeyRequest): Promise<Principal> {
  const handle = request.handle === undefined ? defaultHandle(request.name) : normalizeHandle(request.handle)
  if (!isHandle(handle)) throw new KeyRequestError(`handle "${request.handle}" must match ^[a-z0-9][a-z0-9._-]{0,63}$ (a leading @ is dropped)`)
  const agentId = request.agentId?.toLowerCase()
  if (agentId !== undefined && request.role !== undefined) throw new KeyRequestError('an agent key has the role agent: leave out --role')
  let principal = await findPrincipalByHandle(trx, request.workspaceId, handle)
  const created = !principal
  if (!principal) {
    if (agentId !== undefined && !(await findAgent(trx, request.workspaceId, agentId))) {
      throw new KeyRequestError(`agent ${agentId} does not exist in this workspace`)
    }
    // Two key creations racing for one new handle end up with one principal: the loser reads the winner's.
    await trx
      .insertInto('principals')
      .values({
        id: newId(),
        workspace_id: request.workspaceId,
        handle,
        role: agentId !== undefined ? 'agent' : (request.role ?? 'member'),
        agent_id: agentId ?? null,
        created_at: now(),
      })
      .onConflict((oc) => oc.columns(['workspace_id', 'handle']).doNothing())
      .execute()
    principal = (await findPrincipalByHandle(trx, request.workspaceId, handle)) as Principal
  }
  if (agentId !== undefined && principal.agentId !== agentId) {
    throw new KeyRequestError(`handle "${handle}" belongs to ${principal.agentId ? `agent ${principal.agentId}` : `a ${principal.role}`}, not to agent ${agentId}; choose another --handle`)
  }
  if (agentId === undefined && principal.role === 'agent') {
    throw new KeyRequestError(`handle "${handle}" is agent ${principal.agentId}'s; add --agent ${principal.agentId} or choose another --handle`)
  }
  // An admin's key is never made by accident: a name whose default handle is an admin's (`--name Local` → @local)
  // must say both who (--handle) and what (--role admin) it means.
  if (!created && principal.role === 'admin' && (request.handle === undefined || request.role !== 'admin')) {
    throw new KeyRequestError(`handle "${handle}" is an admin; a new key of it needs both --handle ${handle} and --role admin (otherwise choose another --handle)`)
  }
  if (request.role !== undefined && request.role !== principal.role) {
    throw new KeyRequestError(`handle "${handle}" is a${principal.role === 'admin' ? 'n' : ''} ${principal.role}; a new key of it has that role (leave out --role)`)
  }
  return principal
}

/** Makes a key for the principal the request names (creating the principal if its handle is new). */
export async function createApiKey(db: Kysely<Database>, request: KeyRequest): Promise<{ id: string; key: string; principalId: string; principal: Principal }> {
  return inTransaction(db, async (trx) => {
    const principal = await principalForKey(trx, request)
    const key = KEY_PREFIX + randomBytes(32).toString('base64url')
    const id = newId()
    await trx
      .insertInto('api_keys')
      .values({
        id,
        workspace_id: request.workspaceId,
        name: request.name,
        principal_id: principal.principalId,
        role: principal.role,
        key_hash: hashKey(key),
        created_at: now(),
        revoked_at: null,
      })
      .execute()
    return { id, key, principalId: principal.principalId, principal }
  })
}

export async function revokeApiKey(db: Kysely<Database>, id: string): Promise<boolean> {
  const result = await db.updateTable('api_keys').set({ revoked_at: now() }).where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

export async function listApiKeys(db: Kysely<Database>) {
  return db
    .selectFrom('api_keys')
    .innerJoin('workspaces', 'workspaces.id', 'api_keys.workspace_id')
    .innerJoin('principals', 'principals.id', 'api_keys.principal_id')
    .select(['api_keys.id', 'api_keys.name', 'principals.role', 'principals.handle', 'principals.agent_id', 'api_keys.principal_id', 'api_keys.created_at', 'api_keys.revoked_at', 'workspaces.name as workspace'])
    .orderBy('api_keys.id')
    .execute()
}

// Every request with a key runs this: built and compiled once (src/db/prepared.ts).
const selectByKeyHash = prepared(1, (db, keyHash: Expression<string>) =>
  db
    .selectFrom('api_keys')
    .innerJoin('principals', 'principals.id', 'api_keys.principal_id')
    .leftJoin('agents', 'agents.id', 'principals.agent_id')
    .select(['principals.id', 'principals.workspace_id', 'principals.role', 'principals.handle', 'principals.agent_id', 'agents.id as live_agent_id'])
    .where('api_keys.key_hash', '=', keyHash)
    .where('api_keys.revoked_at', 'is', null),
)

/**
 * Looks a presented key up by its hash: no secret is ever compared byte by byte. An agent key stops working
 * when its agent is deleted.
 */
export async function findPrincipalByKey(db: Kysely<Database>, key: string): Promise<Principal | undefined> {
  if (!key.startsWith(KEY_PREFIX)) return undefined
  const [row] = await selectByKeyHash(db, hashKey(key))
  if (!row || (row.role === 'agent' && row.live_agent_id === null)) return undefined
  return { workspaceId: row.workspace_id, principalId: row.id, role: row.role, handle: row.handle, agentId: row.agent_id }
}
