// The runs and run_tasks tables as Kysely sees them (owned by src/runs/store.ts; types only).
import type { Generated } from 'kysely'
import type { RunStatus } from './schemas.js'

export type TaskState = 'open' | 'answered' | 'failed' | 'canceled' | 'superseded'

export interface RunTable {
  id: string
  workspace_id: string
  stream_id: string
  status: RunStatus
  document: string
  /** The W3C traceparent of the request that started the run (its span); null for runs from before 0036. */
  traceparent: string | null
  created_at: string
  /** What started the run (0060): manual, schedule, message or hook, and the id of that schedule, trigger or hook. */
  trigger_kind: Generated<'manual' | 'schedule' | 'message' | 'hook' | 'a2a'>
  trigger_id: string | null
  /** The message-trigger loop guard (0060). */
  depth: Generated<number>
  /** 0070: 1 once a call of the task tool route was made in the run (tool-calls/task.ts), else 0. */
  route_calls: Generated<number>
  /** 0138: the span the run's invoke_workflow links to (src/tracing/triggered.ts); null without traces or a known cause. */
  trace_link: Generated<string | null>
}

export interface RunTaskTable {
  id: string
  workspace_id: string
  run_id: string
  phase_run_id: string
  agent_id: string
  attempt: number
  feedback: string | null
  delivery: 'push' | 'claim'
  state: TaskState
  token_hash: string | null
  past_token_hashes: Generated<string>
  lease_until: string | null
  created_at: string
  closed_at: string | null
  /** The task's own span in its run's trace (a child of the run's traceparent); null when the run has none. */
  traceparent: string | null
  /** 0053: `{ inputTokens, outputTokens }` as JSON when the vendor reported them for this attempt. */
  usage: Generated<string | null>
  /** 0121: how long the task's clock stood still in all (a remote A2A task waiting on Tandem's operators), in ms. */
  clock_paused_ms: Generated<number | string>
  /** 0121: when the task's clock stopped (null: it runs); no time-out is armed meanwhile. */
  clock_paused_at: Generated<string | null>
}
