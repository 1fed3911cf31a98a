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
  /** 0135: the artifacts last seen, JSON `{ artifactId: digest of its text }` (null before the task's first change). */
  artifact_keys: Generated<string | null>
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

/** A caller's push notification config of a task (0135); the token and credentials sealed by the vault (AAD: id). */
export interface A2aPushConfigTable {
  id: string
  run_id: string
  principal_id: string
  /** The config's id as its maker knows it (given, or a UUIDv7). */
  config_id: string
  url: string
  token_key_id: string | null
  token_ciphertext: string | null
  auth_scheme: string | null
  credentials_key_id: string | null
  credentials_ciphertext: string | null
  created_at: string
  updated_at: string
}

/** One update to POST to one config (0135); `id` is the `webhook-id` of every attempt. */
export interface A2aPushDeliveryTable {
  id: string
  config_row_id: string
  run_id: string
  payload: string
  status: 'pending' | 'succeeded' | 'failed'
  attempts: number
  last_status: number | null
  last_error: string | null
  next_attempt_at: string | null
  created_at: string
  updated_at: string
}
