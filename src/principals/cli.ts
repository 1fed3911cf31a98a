// `keys create|list|revoke`: the key commands of src/cli.ts. Each returns the lines to print.
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { ensureWorkspace } from '../workspaces/store.js'
import { KeyRequestError, createApiKey, listApiKeys, revokeApiKey } from './store.js'

export const KEYS_USAGE = `  npm run cli -- keys create --name <name> [--handle <handle>] [--role admin|member] [--workspace <name>]
  npm run cli -- keys create --name <name> --agent <agent id> [--handle <handle>] [--workspace <name>]
  npm run cli -- keys list
  npm run cli -- keys revoke <key id>`

/** A mistake in the command line; the CLI prints it and exits with status 2. */
export class UsageError extends Error {}

export interface CreateKeyOptions {
  name?: string
  handle?: string
  role?: string
  agent?: string
  workspace: string
}

export async function createKeyCommand(db: Kysely<Database>, options: CreateKeyOptions): Promise<string[]> {
  if (!options.name) throw new UsageError('--name is required')
  if (options.role !== undefined && options.role !== 'admin' && options.role !== 'member') throw new UsageError('--role must be admin or member')
  if (options.agent !== undefined && options.role !== undefined) throw new UsageError('an agent key has the role agent: leave out --role')
  const workspaceId = await ensureWorkspace(db, options.workspace)
  try {
    const created = await createApiKey(db, {
      workspaceId,
      name: options.name,
      ...(options.handle !== undefined ? { handle: options.handle } : {}),
      ...(options.role !== undefined ? { role: options.role as 'admin' | 'member' } : {}),
      ...(options.agent !== undefined ? { agentId: options.agent } : {}),
    })
    const { principal } = created
    return [
      `key id ${created.id}, principal ${principal.principalId} @${principal.handle}, role ${principal.role}${principal.agentId ? ` (agent ${principal.agentId})` : ''}, workspace ${options.workspace}`,
      'Store this key now; it is not shown again:',
      created.key,
    ]
  } catch (error) {
    if (error instanceof KeyRequestError) throw new UsageError(error.message)
    throw error
  }
}

export async function listKeysCommand(db: Kysely<Database>): Promise<string[]> {
  return (await listApiKeys(db)).map(
    (key) => `${key.id}  ${key.workspace}  @${key.handle}  ${key.role}${key.agent_id ? ` ${key.agent_id}` : ''}  ${key.name}  ${key.revoked_at ? `revoked ${key.revoked_at}` : 'active'}`,
  )
}

export async function revokeKeyCommand(db: Kysely<Database>, id: string): Promise<string[]> {
  return [(await revokeApiKey(db, id)) ? `revoked ${id}` : `no active key ${id}`]
}
