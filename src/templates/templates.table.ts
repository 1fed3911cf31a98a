// The `agent_templates` table as Kysely sees it (owned by src/templates/store.ts; types only).
export interface AgentTemplateTable {
  workspace_id: string
  /** A slug, unique in its workspace. */
  id: string
  name: string
  description: string
  /** The template's agent fields as JSON text. */
  agent: string
  created_at: string
  updated_at: string
}
