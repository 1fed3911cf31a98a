// Requests as someone: an API key made straight in the store (as the CLI's `keys create` makes one), its bearer header,
// and `app.inject` with it — so a test says who asks (`injectWithKey(app, maria, { url })`), not how the header is
// spelled. A request with no key acts as the local admin (TANDEM_AUTH=local, the tests' default).
import type { FastifyInstance, InjectOptions } from 'fastify'
import { createApiKey, type KeyRequest } from '../src/principals/store.js'
import { ensureWorkspace } from '../src/workspaces/store.js'

export interface TestKey {
  /** The key itself (`tdm_…`), for a client that sets its own header. */
  key: string
  /** The key's id (to revoke it). */
  id: string
  principalId: string
  /** `{ authorization: 'Bearer <key>' }`, for `send` and `fetch`. */
  headers: { authorization: string }
}

export interface KeyOptions extends Partial<Omit<KeyRequest, 'workspaceId'>> {
  /** The workspace's id; else the workspace named `workspace`. */
  workspaceId?: string
  /** The name of the workspace (made when missing), `default` unless told. */
  workspace?: string
}

/** A new API key (a member's called `key` unless told), in the workspace named `default` unless told. */
export async function createKey(app: Pick<FastifyInstance, 'database'>, options: KeyOptions = {}): Promise<TestKey> {
  const { workspaceId, workspace = 'default', name = options.handle ?? 'key', ...rest } = options
  const db = app.database.db
  const created = await createApiKey(db, { ...rest, name, workspaceId: workspaceId ?? (await ensureWorkspace(db, workspace)) })
  return { key: created.key, id: created.id, principalId: created.principalId, headers: bearer(created.key) }
}

/** The Authorization header of a key. */
export const bearer = (key: string): { authorization: string } => ({ authorization: `Bearer ${key}` })

/** `app.inject` as the key's owner: its Authorization header over the options' own headers. */
export function injectWithKey(app: FastifyInstance, key: TestKey | string, options: InjectOptions) {
  const headers = bearer(typeof key === 'string' ? key : key.key)
  return app.inject({ ...options, headers: { ...(options.headers ?? {}), ...headers } })
}
