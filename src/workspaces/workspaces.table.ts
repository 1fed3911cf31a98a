// The `workspaces` table as Kysely sees it (owned by src/workspaces/store.ts; types only).

export interface WorkspaceTable {
  id: string
  name: string
  created_at: string
}
