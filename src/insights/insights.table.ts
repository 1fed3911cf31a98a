// The scorecard rollup tables as Kysely sees them (owned by src/insights/rollup.ts; types only).

/** One phase run of an agent (people's work has none), rewritten whenever the run engine moves it. */
export interface InsightPhaseRunTable {
  phase_run_id: string
  workspace_id: string
  agent_id: string
  run_id: string
  stream_id: string
  cycle_id: string
  trigger_name: string
  phase_id: string
  phase_name: string
  /** The phase run's startedAt (kept across revisions): the window a scorecard counts it in. */
  started_at: string
  /** 1 when the phase waits for a decision (autoAdvance false). */
  gated: number
  answered: number
  approved: number
  revised: number
  rejected: number
  expired: number
  overridden: number
  tool_auto: number
  tool_approved: number
  tool_denied: number
  tool_failed: number
  questions: number
  input_tokens: number | string
  output_tokens: number | string
  cost_usd: number | null
  run_failed: number
}

/** One ended decision wait of a phase run; `seq` is the index of its ending decision. */
export interface InsightWaitTable {
  phase_run_id: string
  seq: number
  workspace_id: string
  agent_id: string
  stream_id: string
  cycle_id: string
  phase_id: string
  started_at: string
  outcome: 'approved' | 'revised' | 'rejected' | 'expired'
  /** Ending decision's `at` minus the wait's start, for waits a person ended; null at expiry. */
  decision_ms: number | string | null
  ended_at: string
}

/**
 * The sums of one agent's per-phase-run rows whose phase run started on one UTC `day` (YYYY-MM-DD), kept by the
 * fold (fold.ts) from the rows' notes in insight_unfolded; read, with those notes, for the whole days of a
 * scorecard's window.
 */
export interface InsightAgentDayTable {
  workspace_id: string
  agent_id: string
  day: string
  phase_runs: number
  answered: number
  approved: number
  revised: number
  rejected: number
  expired: number
  overridden: number
  /** Phase runs approved without a revise. */
  first_pass: number
  /** Revises of the phase runs that ended approved. */
  revisions_approved: number
  tool_auto: number
  tool_approved: number
  tool_denied: number
  tool_failed: number
  questions: number
  /** Phase runs with a cost, and those of them gated. */
  priced: number
  gated_priced: number
  run_failed: number
  input_tokens: number | string
  output_tokens: number | string
  cost: number
  gated_cost: number
  /** The decision times (ms) of the day's waits a person ended, each followed by a comma. */
  decision_samples: string
}

/** The same sums per agent and UTC `hour` (YYYY-MM-DDTHH) of the phase runs' start: the hourly series' whole hours. */
export type InsightAgentHourTable = Omit<InsightAgentDayTable, 'day'> & { hour: string }

/**
 * The same sums per `scope` (`stream:<id>` or `cycle:<id>`: a phase run counts in its run's stream's and its
 * cycle's), UTC day and agent: the whole days of a list or daily series filtered by a stream or a cycle.
 */
export type InsightScopeDayTable = InsightAgentDayTable & { scope: string }

/**
 * A phase run whose row changed since the fold last added it to the summed rows: its keys (fixed for a phase run),
 * its row's figures then (`old`, day-rollup.ts figuresText; null when new) and the last `seq` of its wait rows then (-1: none).
 */
export interface InsightUnfoldedTable {
  phase_run_id: string
  workspace_id: string
  agent_id: string
  stream_id: string
  cycle_id: string
  started_at: string
  old: string | null
  old_wait_seq: number
}
