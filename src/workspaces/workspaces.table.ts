// The `workspaces` table as Kysely sees it (owned by src/workspaces/store.ts; types only). API keys belong to
// principals: src/principals/store.ts.

export interface WorkspaceTable {
  id: string
  name: string
  created_at: string
}
