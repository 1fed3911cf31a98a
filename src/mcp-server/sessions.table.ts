// The mcp_sessions table as Kysely sees it (owned by src/mcp-server/sessions.ts; types only).
export interface McpSessionTable {
  id: string
  workspace_id: string
  principal_id: string
  /** sha256 of the API key that opened the session (`local` for a key-less loopback request in local mode). */
  key_hash: string
  protocol_version: string
  /** JSON array of the resource URIs the session subscribed to. */
  subscriptions: string
  created_at: string
  last_used_at: string
}
