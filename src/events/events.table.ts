// The stream_event_heads and stream_events tables as Kysely sees them (owned by src/events/store.ts; types only).

export interface StreamEventHeadTable {
  stream_id: string
  workspace_id: string
  last_id: number
  purged_through: number
}

export interface StreamEventTable {
  stream_id: string
  id: number
  workspace_id: string
  type: string
  data: string
  created_at: string
}
