// The `cycles` table as Kysely sees it (owned by src/cycles/store.ts; types only, imports nothing).

export interface CycleTable {
  id: string
  workspace_id: string
  stream_id: string
  trigger_name: string
  description: string
  phases: string
  created_at: string
}
