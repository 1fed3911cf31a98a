// The `keys` commands of the CLI: create, list and revoke API keys.
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { createApiKey, ensureWorkspace, listApiKeys, revokeApiKey, type Role } from './store.js'

export async function createKey(db: Kysely<Database>, input: { name: string; role: Role; workspace: string }): Promise<string[]> {
  const workspaceId = await ensureWorkspace(db, input.workspace)
  const created = await createApiKey(db, { workspaceId, name: input.name, role: input.role })
  return [
    `key id ${created.id}, principal ${created.principalId}, role ${input.role}, workspace ${input.workspace}`,
    'Store this key now; it is not shown again:',
    created.key,
  ]
}

export async function listKeys(db: Kysely<Database>): Promise<string[]> {
  const rows = (await listApiKeys(db)).map((key) => [key.id, key.workspace, key.role, key.name, key.revoked_at ? `revoked ${key.revoked_at}` : 'active'])
  const table = [['ID', 'WORKSPACE', 'ROLE', 'NAME', 'STATE'], ...rows]
  const widths = table[0]!.map((_, column) => Math.max(...table.map((row) => (row[column] as string).length)))
  return table.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] as number))).join('  '))
}

/** True when an active key was revoked. */
export async function revokeKey(db: Kysely<Database>, id: string): Promise<boolean> {
  return revokeApiKey(db, id)
}
