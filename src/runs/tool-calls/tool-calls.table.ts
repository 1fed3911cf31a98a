// The tool_calls table as Kysely sees it (owned by src/runs/tool-calls/store.ts; types only).
export type ToolCallStatus = 'running' | 'awaiting_approval' | 'succeeded' | 'failed' | 'denied'

export interface ToolCallTable {
  id: string
  workspace_id: string
  run_id: string
  phase_run_id: string
  /** The task (attempt) whose model loop made the call. */
  task_id: string
  attempt: number
  /** The model step (1-based) that asked for the call, and its place among the step's calls; step 0: the task tool route. */
  step: number
  position: number
  /** The id the model gave the call (its tool result is sent back under it). */
  model_call_id: string
  name: string
  /** JSON text. */
  input: string
  /** The whole output as the model receives it (at most 64 KiB). */
  output: string | null
  error: string | null
  status: ToolCallStatus
  /** JSON: { required, decision, note, principalId, handle, at } or null. */
  approval: string | null
  /** JSON: the loop's state when the step's calls were made (messages, usage, step). */
  loop_state: string | null
  /** JSON: { principalId, handle, at, via } once an operator answered the question, else null. */
  answered_by: string | null
  dispatched_at: string | null
  started_at: string
  finished_at: string | null
}
