// The `credentials` table as Kysely sees it (owned by src/credentials/store.ts; types only).

export interface CredentialTable {
  id: string
  workspace_id: string
  name: string
  hint: string
  /** The id of the vault key that sealed `ciphertext`. */
  key_id: string
  ciphertext: string
  created_at: string
  updated_at: string
}
