// The `streams` table as Kysely sees it (owned by src/streams/store.ts; types only, imports nothing).

export interface StreamTable {
  id: string
  workspace_id: string
  name: string
  description: string | null
  created_at: string
}
