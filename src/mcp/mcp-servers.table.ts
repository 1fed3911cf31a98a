// The `mcp_servers` table as Kysely sees it (owned by src/mcp/store.ts; types only).
export interface McpServerTable {
  id: string
  workspace_id: string
  /** Unique in its workspace; the `<server>` of a tool entry `<server>.<tool>`. */
  name: string
  url: string
  credential_id: string | null
  /** The approval globs as JSON text: `{ "<glob>": "always" | "never" }`. */
  approval: string
  created_at: string
  updated_at: string
}
