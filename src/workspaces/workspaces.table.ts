// The `workspaces` and `api_keys` tables as Kysely sees them (owned by src/workspaces/store.ts; types only).

export interface WorkspaceTable {
  id: string
  name: string
  created_at: string
}

export type Role = 'admin' | 'member'

export interface ApiKeyTable {
  id: string
  workspace_id: string
  name: string
  principal_id: string
  role: Role
  key_hash: string
  created_at: string
  revoked_at: string | null
}
