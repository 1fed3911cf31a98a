// The one way schedules, message triggers and inbound hooks start runs: fire a stream's trigger as
// `POST /api/streams/{streamId}/triggers/{triggerName}` does, saying what fired it. At the engine's service layer
// at most MAX_RUNS_PER_TRIGGER runs (the engine's triggeredCycles: a 409 too-many-runs past it, nothing started).
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import type { RunsConfig } from '../config.js'
import { triggeredCycles } from '../runs/service.js'
import { createRun, type Transition } from '../runs/machine/machine.js'
import type { Run, RunTrigger } from '../runs/schemas.js'
import { AppError } from '../http/problem.js'
import { triggeredTraceparent } from '../tracing/triggered.js'

export interface FireDeps {
  settings: RunsConfig
}

/** A job's dependencies: the log takes what a job cannot answer to anyone. */
export interface JobFireDeps extends FireDeps {
  log: { warn(object: object, message: string): void }
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
  /** The span the runs' invoke_workflow links to (a traceparent: the run whose message fired them), when known. */
  traceLink?: string | null
}

/**
 * Starts one run of every saved cycle of the stream with this trigger name, inside `trx`; the runs started.
 * Throws the AppError too-many-runs before writing anything when more cycles match than one trigger may start.
 */
export async function fireStreamTrigger(deps: FireDeps, trx: Kysely<Database>, request: FireRequest): Promise<Run[]> {
  const cycles = await triggeredCycles(trx, request.workspaceId, request.streamId, request.triggerName)
  const runs: Run[] = []
  for (const cycle of cycles) {
    if (cycle.id === request.excludeCycleId) continue
    // No request started these runs: each is a trace of its own when traces are on (src/tracing/triggered.ts).
    const t: Transition = { db: trx, workspaceId: request.workspaceId, settings: deps.settings, traceparent: triggeredTraceparent(trx) }
    const run = await createRun(t, { cycle, input: request.input, createdBy: request.createdBy, trigger: request.trigger, depth: request.depth ?? 0 })
    if (t.traceparent && request.traceLink) await trx.updateTable('runs').set({ trace_link: request.traceLink }).where('id', '=', run.id).execute()
    runs.push(run)
  }
  return runs
}

/** fireStreamTrigger for the jobs of schedules and message triggers: a fan-out past the bound starts nothing and is logged, it is not retried (it would fail the same way, and hold back the schedule's next tick). */
export async function fireStreamTriggerInJob(deps: JobFireDeps, trx: Kysely<Database>, request: FireRequest): Promise<Run[]> {
  try {
    return await fireStreamTrigger(deps, trx, request)
  } catch (error) {
    if (!(error instanceof AppError) || error.kind !== 'too-many-runs') throw error
    deps.log.warn({ streamId: request.streamId, triggerName: request.triggerName, trigger: request.trigger }, error.message)
    return []
  }
}
