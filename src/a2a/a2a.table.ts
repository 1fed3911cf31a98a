// The a2a_tasks and a2a_task_messages tables as Kysely sees them (owned by src/a2a/tasks-store.ts; types only).

export interface A2aTaskTable {
  run_id: string
  workspace_id: string
  cycle_id: string
  stream_id: string
  principal_id: string
  /** The A2A messageId of the SendMessage that started the task. */
  message_id: string
  created_at: string
}

export interface A2aTaskMessageTable {
  id: string
  run_id: string
  message_id: string
  role: 'user' | 'agent'
  text: string
  created_at: string
}
