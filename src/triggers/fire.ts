// The one way schedules, message triggers and inbound hooks start runs: fire a stream's trigger as
// `POST /api/streams/{streamId}/triggers/{triggerName}` does, saying what fired it. At the engine's service layer
// this function is the single place to re-point.
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import type { RunsConfig } from '../config.js'
import { listCyclesByTrigger } from '../cycles/store.js'
import { createRun, type Transition } from '../runs/machine.js'
import type { Run, RunTrigger } from '../runs/schemas.js'

export interface FireDeps {
  settings: RunsConfig
}

export interface FireRequest {
  workspaceId: string
  streamId: string
  triggerName: string
  input: Record<string, unknown>
  /** The principal the runs are started for (`createdBy`). */
  createdBy: string
  trigger: RunTrigger
  /** The loop guard of message triggers (0 otherwise). */
  depth?: number
  /** A cycle that must not be started (the one whose run wrote the message). */
  excludeCycleId?: string
}

/** Starts one run of every saved cycle of the stream with this trigger name, inside `trx`; the runs started. */
export async function fireStreamTrigger(deps: FireDeps, trx: Kysely<Database>, request: FireRequest): Promise<Run[]> {
  const cycles = await listCyclesByTrigger(trx, request.workspaceId, request.streamId, request.triggerName)
  const t: Transition = { db: trx, workspaceId: request.workspaceId, settings: deps.settings, traceparent: null }
  const runs: Run[] = []
  for (const cycle of cycles) {
    if (cycle.id === request.excludeCycleId) continue
    runs.push(await createRun(t, { cycle, input: request.input, createdBy: request.createdBy, trigger: request.trigger, depth: request.depth ?? 0 }))
  }
  return runs
}
