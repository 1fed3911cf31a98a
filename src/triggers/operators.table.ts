// The tables of schedules, message triggers, inbound hooks and inbox claims as Kysely sees them (types only;
// owned by src/schedules, src/triggers, src/hooks and src/inbox).

export interface ScheduleTable {
  id: string
  workspace_id: string
  stream_id: string
  trigger_name: string
  cron: string
  timezone: string
  input: string
  enabled: number
  next_run_at: string | null
  last_run_at: string | null
  created_by: string
  created_at: string
  updated_at: string
}

/** Schedule ticks a workspace fired in one clock minute (`minute`: ISO 8601 cut to the minute). */
export interface ScheduleFiringTable {
  workspace_id: string
  minute: string
  count: number
}

export interface MessageTriggerTable {
  id: string
  workspace_id: string
  stream_id: string
  trigger_name: string
  mention: string | null
  prefix: string | null
  author_type: 'principal' | 'agent' | null
  created_by: string
  created_at: string
}

export interface MessageTriggerPassTable {
  message_id: string
  created_at: string
}

/** A chain of runs begun by one message or run: how many runs message triggers started in it, how many messages were refused. */
export interface TriggerChainTable {
  root_id: string
  workspace_id: string
  runs: number
  refused: number
  created_at: string
}

/** The chain a run started by a message trigger belongs to. */
export interface TriggerChainRunTable {
  run_id: string
  root_id: string
  created_at: string
}

export interface InboundHookTable {
  id: string
  workspace_id: string
  stream_id: string
  trigger_name: string
  secret_key_id: string
  secret_ciphertext: string
  created_by: string
  created_at: string
}

export interface HookReceiptTable {
  hook_id: string
  webhook_id: string
  answer: string
  created_at: string
}

export interface InboxClaimTable {
  phase_run_id: string
  workspace_id: string
  run_id: string
  principal_id: string
  handle: string
  expires_at: string
}
