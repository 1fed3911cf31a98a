// The `messages` and `message_revisions` tables as Kysely sees them (owned by src/chat/store.ts; types only).
import type { Generated } from 'kysely'

export interface MessageTable {
  id: string
  workspace_id: string
  stream_id: string
  author_id: string
  author_type: Generated<'principal' | 'agent'>
  content: string
  text: string
  revision: number
  created_at: string
  edited_at: string | null
}

export interface MessageRevisionTable {
  message_id: string
  revision: number
  content: string
  text: string
  created_at: string
}
