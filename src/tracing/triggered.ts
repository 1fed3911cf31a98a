// The trace of a run no request started (a schedule's tick, a message trigger, an inbound hook): a trace of its
// own, whose invoke_workflow is the root. The run's stored traceparent names a parent span that never exists —
// one derived from the trace id — so the spans recorded later know the run's invoke_workflow has no parent, and
// everything else of the run (tasks, waits, deliveries) is in that trace as for a request's run. A run a message
// of another run started links its invoke_workflow to that run's. Only when traces are on: off, nothing is stored.
import { randomBytes } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { dbContext } from '../db/context.js'
import { parseTraceparent } from '../http/trace.js'
import { derivedSpanId } from './ids.js'

declare module '../db/context.js' {
  interface DbContext {
    /** Whether a new trace with this id is sampled (the configured sampler's root decision; src/tracing/index.ts). */
    sampleRoot?: (traceId: string) => boolean
  }
}

/** The parent span id a triggered run's stored traceparent names: its invoke_workflow is the trace's root. */
export function rootMarker(traceId: string): string {
  return derivedSpanId('root', traceId)
}

/** A new trace for a triggered run (its stored traceparent), or null when traces are off. */
export function triggeredTraceparent(db: Kysely<Database>): string | null {
  const context = dbContext(db)
  if (!context.tracesOn) return null
  const traceId = randomBytes(16).toString('hex')
  return `00-${traceId}-${rootMarker(traceId)}-${context.sampleRoot?.(traceId) === false ? '00' : '01'}`
}

/**
 * The span a run started by `originRunId`'s message links to: that run's invoke_workflow (a traceparent), or null
 * when traces are off or the run has no trace.
 */
export async function causeOfRun(db: Kysely<Database>, originRunId: string): Promise<string | null> {
  if (!dbContext(db).tracesOn) return null
  const row = await db.selectFrom('runs').select('traceparent').where('id', '=', originRunId).executeTakeFirst()
  const origin = parseTraceparent(row?.traceparent ?? undefined)
  return origin && `00-${origin.traceId}-${derivedSpanId('invoke_workflow', originRunId)}-${origin.flags}`
}
