// A tool call's wait ended (an approval decided, a question answered, either expired): the events the metrics and
// the traces hear of it. Called by the run engine's tool-call code where it records the outcome.
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { now } from '../ids.js'
import { emitInsight, type WaitOutcome } from './events.js'

interface CallRow { id: string; phase_run_id: string; started_at: string }

export async function toolWaitEnded(
  t: { db: Kysely<Database>; traceparent: string | null },
  run: { id: string },
  phase: { agentId: string },
  row: CallRow,
  kind: 'tool_approval' | 'question',
  outcome: WaitOutcome,
  handle: string | null,
): Promise<void> {
  const expired = outcome === 'expire'
  if (kind === 'tool_approval' && (outcome === 'approve' || outcome === 'deny')) {
    await emitInsight(t.db, { type: 'tool_approval', agentId: phase.agentId, decision: outcome, by: handle === 'system' ? 'expiry' : 'person' })
  }
  await emitInsight(t.db, {
    type: 'wait_ended', kind, outcome: handle === 'system' && !expired ? 'expire' : outcome, since: row.started_at, at: now(),
    decidedBy: handle === 'system' || expired ? ['system'] : handle ? [handle] : [], runId: run.id, phaseRunId: row.phase_run_id, callId: row.id, traceparent: t.traceparent,
  })
}
