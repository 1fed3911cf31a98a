// The A2A tables as Kysely sees them (owned by src/a2a/tasks-store.ts and remote-ledger.ts; types only).
import type { Generated } from 'kysely'

export interface A2aTaskTable {
  run_id: string
  workspace_id: string
  cycle_id: string
  stream_id: string
  principal_id: string
  /** The A2A messageId of the SendMessage that started the task. */
  message_id: string
  created_at: string
  /** 0120: the task's last change (a run change or a message on it). */
  updated_at: string | null
  /** 0120: the status last recorded, `<TaskState name>|<status text>` (null before 0120). */
  status_key: string | null
}

export interface A2aTaskMessageTable {
  id: string
  run_id: string
  message_id: string
  role: 'user' | 'agent'
  text: string
  created_at: string
  /** 0120, agent rows: the TaskState's name and the status message's `metadata.tandem` (JSON). */
  state: string | null
  meta: string | null
}

/** A Tandem task sent to a remote A2A agent (0091): recorded before the send. */
export interface A2aRemoteTaskTable {
  task_id: string
  endpoint_url: string
  remote_task_id: string | null
  remote_context_id: string | null
  sent_at: string
  canceled_at: string | null
  /** The question call whose answer was last sent back to the remote. */
  relayed_call_id: Generated<string | null>
}
