// `keys create|list|revoke`: the key commands of src/cli.ts. Each returns the lines to print.
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { ensureWorkspace } from '../workspaces/store.js'
import { KeyRequestError, createApiKey, listApiKeys } from './store.js'

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

/** The keys as a table with a header, never the keys themselves. */
export async function listKeysCommand(db: Kysely<Database>): Promise<string[]> {
  const rows = (await listApiKeys(db)).map((key) => [key.id, key.workspace, `@${key.handle}`, key.role, key.agent_id ?? '-', key.name, key.revoked_at ? `revoked ${key.revoked_at}` : 'active'])
  const table = [['ID', 'WORKSPACE', 'HANDLE', 'ROLE', 'AGENT', 'NAME', 'STATE'], ...rows]
  const widths = table[0]!.map((_, column) => Math.max(...table.map((row) => (row[column] as string).length)))
  return table.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] as number))).join('  '))
}
