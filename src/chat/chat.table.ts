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
  /** 0053: streaming while an agent's answer arrives, failed when its attempt failed for good. */
  status: Generated<'streaming' | 'complete' | 'failed'>
  /** 0053: the run task whose answer the message holds (one message per task). */
  task_id: Generated<string | null>
  /** 0053: the claim (token hash) whose /deltas wrote the text; another claim's first delta resets it. */
  stream_key: Generated<string | null>
  /** 0130: a streaming message's text length in UTF-16 code units, kept by the delta that appends in SQL. */
  stream_length: Generated<number | null>
}

export interface MessageRevisionTable {
  message_id: string
  revision: number
  content: string
  text: string
  created_at: string
}
