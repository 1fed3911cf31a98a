// `credentials rekey`: re-seals every secret the vault keeps in the database — the credentials, then the webhook
// subscriptions' signing secrets — with the current key (TANDEM_SECRET_KEY), reading the old ones with
// TANDEM_SECRET_KEY_PREVIOUS. Run it after rotating the key, then drop the previous key.
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import type { Config } from '../config.js'
import { SEALED, reseal } from './rekey.js'
import { openVault } from './vault.js'

export async function rekeyCommand(db: Kysely<Database>, config: Config): Promise<string[]> {
  const vault = openVault(config)
  const lines: string[] = []
  for (const columns of SEALED) {
    const count = await reseal(db, vault, columns)
    lines.push(`re-encrypted ${count} ${columns.noun}${count === 1 ? '' : 's'} with key ${vault.keyId}`)
  }
  return lines
}
