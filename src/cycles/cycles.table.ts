// The `cycles` table as Kysely sees it (owned by src/cycles/store.ts; types only).
import type { Generated } from 'kysely'

export interface CycleTable {
  id: string
  workspace_id: string
  stream_id: string
  trigger_name: string
  description: string
  phases: string
  /** the decision policy as JSON (0061), null when none */
  policy: string | null
  /** the A2A exposure as JSON (0090), null when never set */
  a2a: Generated<string | null>
  created_at: string
}

/** One row per decision-clock timer that took effect (its job key): src/waits/clock.ts. */
export interface ClockEffectTable {
  key: string
  run_id: string
  created_at: string
}
