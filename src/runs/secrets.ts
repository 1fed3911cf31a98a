// The one call into the credential vault: the decrypted secret an agent names, or null when it does not exist.
// Until the vault (credentials feature) is merged into this branch no credential exists, so an agent that names
// one is unavailable, which is what RUNS.md asks for a missing credential.
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'

export async function readAgentSecret(_db: Kysely<Database>, _workspaceId: string, _credentialId: string): Promise<string | null> {
  return null
}
