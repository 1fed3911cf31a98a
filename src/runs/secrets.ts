// The one call into the credential vault: the decrypted secret an agent names, or null when it does not exist.
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { readSecret } from '../credentials/store.js'

export async function readAgentSecret(db: Kysely<Database>, workspaceId: string, credentialId: string): Promise<string | null> {
  return readSecret(db, workspaceId, credentialId)
}
