// Re-sealing under the vault's current key (`credentials rekey`). SEALED lists every column pair in which the
// vault keeps a secret (a key id and a ciphertext whose associated data is the row's id): the credentials, and the
// webhook subscriptions' signing secrets, the inbound hooks' secrets, and the A2A push configs' tokens and credentials. `reseal` goes through one in batches of one transaction each. A row is
// replaced only if it still holds what was read, so a secret changed meanwhile (say by a server still sealing
// with the old key) is never overwritten — the next batch reads it again; and a batch only ever holds rows not
// yet under the current key, so a run killed at any point carries on where it stopped when run again.
import { sql, type Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import type { Sealed, Vault } from './vault.js'

type SealedTable = 'credentials' | 'webhooks' | 'inbound_hooks' | 'a2a_push_configs'

export interface SealedColumns {
  /** What the command counts, in the singular. */
  noun: string
  table: SealedTable
  keyId: string
  ciphertext: string
}

function sealedColumns<T extends SealedTable>(noun: string, table: T, keyId: keyof Database[T] & string, ciphertext: keyof Database[T] & string): SealedColumns {
  return { noun, table, keyId, ciphertext }
}

export const CREDENTIAL_SECRETS = sealedColumns('credential', 'credentials', 'key_id', 'ciphertext')
export const WEBHOOK_SECRETS = sealedColumns('webhook secret', 'webhooks', 'secret_key_id', 'secret_ciphertext')
export const INBOUND_HOOK_SECRETS = sealedColumns('inbound hook secret', 'inbound_hooks', 'secret_key_id', 'secret_ciphertext')
export const A2A_PUSH_TOKENS = sealedColumns('A2A push token', 'a2a_push_configs', 'token_key_id', 'token_ciphertext')
export const A2A_PUSH_CREDENTIALS = sealedColumns('A2A push credential', 'a2a_push_configs', 'credentials_key_id', 'credentials_ciphertext')

/** Every secret the vault seals in the database, in the order `credentials rekey` re-seals them. */
export const SEALED: SealedColumns[] = [CREDENTIAL_SECRETS, WEBHOOK_SECRETS, INBOUND_HOOK_SECRETS, A2A_PUSH_TOKENS, A2A_PUSH_CREDENTIALS]

/** Replaces row `id`'s secret, sealed as `from`, with `to` — unless the row no longer holds `from`; whether it did. */
export async function replaceSealed(db: Kysely<Database>, columns: SealedColumns, id: string, from: Sealed, to: Sealed): Promise<boolean> {
  const [keyId, ciphertext] = [sql.ref(columns.keyId), sql.ref(columns.ciphertext)]
  const result = await sql`update ${sql.table(columns.table)} set ${keyId} = ${to.keyId}, ${ciphertext} = ${to.ciphertext}
    where id = ${id} and ${keyId} = ${from.keyId} and ${ciphertext} = ${from.ciphertext}`.execute(db)
  return Number(result.numAffectedRows ?? 0) > 0
}

/** Re-seals every row of `columns` (all workspaces) not sealed with the vault's current key; how many it re-sealed. */
export async function reseal(db: Kysely<Database>, vault: Vault, columns: SealedColumns, batchSize = 100): Promise<number> {
  let count = 0
  for (;;) {
    const read = await db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ id: string } & Sealed>`select id, ${sql.ref(columns.keyId)} as "keyId", ${sql.ref(columns.ciphertext)} as ciphertext
        from ${sql.table(columns.table)} where ${sql.ref(columns.keyId)} <> ${vault.keyId} order by id limit ${batchSize}`.execute(trx)
      for (const row of rows) {
        if (await replaceSealed(trx, columns, row.id, row, vault.seal(vault.open(row, row.id), row.id))) count++
      }
      return rows.length
    })
    if (read < batchSize) return count
  }
}
