// `credentials rekey`: re-encrypts every credential with the current key (TANDEM_SECRET_KEY), reading the
// old ones with TANDEM_SECRET_KEY_PREVIOUS. Run it after rotating the key, then drop the previous key.
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import type { Config } from '../config.js'
import { rekeyCredentials } from './store.js'
import { openVault } from './vault.js'

export const CREDENTIALS_USAGE = '  npm run cli -- credentials rekey'

export async function rekeyCommand(db: Kysely<Database>, config: Config): Promise<string[]> {
  const vault = openVault(config)
  const count = await rekeyCredentials(db, vault)
  return [`re-encrypted ${count} credential${count === 1 ? '' : 's'} with key ${vault.keyId}`]
}
