// The `assets` table as Kysely sees it (owned by src/assets/store.ts; types only).
export interface AssetTable {
  id: string
  workspace_id: string
  content_type: string
  bytes: number
  width: number
  height: number
  /** Hex SHA-256 of the content; the content's ETag. */
  sha256: string
  content: Uint8Array
  created_at: string
}
