// The `agents` table as Kysely sees it (owned by src/agents/store.ts; types only).
import type { Generated } from 'kysely'

export interface AgentTable {
  id: string
  workspace_id: string
  provider_type: string
  auth_mode: string | null
  name: string
  avatar_asset_id: string | null
  credential_id: string | null
  config: string
  instructions: string | null
  template_id: string | null
  streaming: number
  tools: string
  endpoint_url: string | null
  created_at: string
  updated_at: string
  /** 1 at creation, bumped by every change (migration 0038). */
  version: Generated<number>
}
