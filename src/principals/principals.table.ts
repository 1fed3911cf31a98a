// The `principals` and `api_keys` tables as Kysely sees them (owned by src/principals/store.ts; types only).

export type Role = 'admin' | 'member' | 'agent'

export interface PrincipalTable {
  id: string
  workspace_id: string
  handle: string
  role: Role
  /** Set for role `agent`: the agent the principal's keys act for. */
  agent_id: string | null
  created_at: string
}

export interface ApiKeyTable {
  id: string
  workspace_id: string
  name: string
  principal_id: string
  /** The principal's role when the key was made (the principal's own role is the one that counts). */
  role: Role
  key_hash: string
  created_at: string
  revoked_at: string | null
}
