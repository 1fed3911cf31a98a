// What the run engine tells the metrics and the traces as it moves runs: decisions, tool approvals, ended waits,
// settled tasks and finished runs. Listeners hang on the database's context, so the engine, handed only a
// transaction, reaches the app it runs in; they are called inside that transaction and never fail it.
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { dbContext } from '../db/context.js'
import type { PhaseLike, RunLike } from './rollup-rows.js'

export type WaitKind = 'decision' | 'tool_approval' | 'question'
export type WaitOutcome = 'approve' | 'revise' | 'reject' | 'deny' | 'answer' | 'expire' | 'cancel'
export type DecidedBy = 'person' | 'override' | 'expiry'

export type InsightEvent =
  | { type: 'decision'; agentId: string; decision: 'approve' | 'revise' | 'reject' | 'fail'; by: DecidedBy }
  | { type: 'tool_approval'; agentId: string; decision: 'approve' | 'deny'; by: DecidedBy }
  | {
      type: 'wait_ended'
      kind: WaitKind
      outcome: WaitOutcome
      since: string
      at: string
      /** Handles that ended it: every quorum approver in order; `system` at expiry. */
      decidedBy: string[]
      runId: string
      phaseRunId: string
      callId: string | null
      /** The run's stored trace context (null for runs from before traces). */
      traceparent: string | null
    }
  | {
      type: 'model_step'
      /** The agent's providerType, and the task's own span (its invoke_agent) as stored on it. */
      providerType: string
      /** The model call (the adapters' ModelStep): its model, start and end (ms since the epoch), tokens, finish reason, failure class. */
      step: { model: string; start: number; end: number; usage: { inputTokens: number; outputTokens: number } | null; finishReason: string | null; error: string | null }
      runId: string
      phaseRunId: string
      taskId: string
      traceparent: string | null
    }
  | { type: 'task_settled'; run: RunLike; phase: PhaseLike; traceparent: string | null }
  | { type: 'run_finished'; run: RunLike & { createdAt: string; finishedAt: string | null }; traceparent: string | null }

/** A listener; a promise it returns is awaited (the traces read the task's rows in the transaction). */
export type InsightListener = (event: InsightEvent, db: Kysely<Database>) => void | Promise<void>

export function onInsightEvent(db: Kysely<Database>, listener: InsightListener): void {
  const context = dbContext(db)
  context.insightListeners = [...(context.insightListeners ?? []), listener]
}

/** Whether anyone listens for the events only the traces want (so the engine skips building them). */
export function tracesListen(db: Kysely<Database>): boolean {
  return dbContext(db).tracesOn === true
}

export async function emitInsight(db: Kysely<Database>, event: InsightEvent): Promise<void> {
  for (const listener of dbContext(db).insightListeners ?? []) {
    try {
      await listener(event, db)
    } catch {
      // A metric or a span never fails the transition that moved the run.
    }
  }
}
