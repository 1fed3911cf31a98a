// The scorecard rollups, kept by the run engine in the transaction of the change that moves them: machine.ts
// persistRun notes the waits open before it writes (their start lives in the phase's deadlines and toolWaits,
// which the clocks clear), then rewrites the rollup row of every phase run the change moved and adds the wait it
// ended (the tool-call counts are subqueries over tool_calls' run index), and adds the difference to the summed
// rollups per day, hour and stream or cycle (day-rollup.ts). It also tells the metrics and the traces (events.ts) of the decisions, ended waits,
// settled tasks and finished runs.
import type { Expression, ExpressionBuilder, Kysely, SqlBool } from 'kysely'
import type { Database } from '../db/database.js'
import type { InsightPhaseRunTable } from './insights.table.js'
import { ASK_OPERATOR, endedWaits, isCounted, phaseRow, waitRow, type PhaseLike, type RunLike } from './rollup-rows.js'
import { decisionTimeAdded, phaseRowMoved } from './day-rollup.js'
import { emitInsight, tracesListen, type DecidedBy, type WaitOutcome } from './events.js'

const NIL_UUID = '00000000-0000-0000-0000-000000000000'
const ACTIVE = ['running', 'awaiting_tool_approval', 'awaiting_input']
const FINISHED = ['succeeded', 'failed', 'rejected', 'canceled']

interface OpenWait { since: string | null; tools: Array<{ callId: string; kind: 'tool_approval' | 'question'; since: string }> }

/** The waits open before the change: where each phase began waiting for a decision, and its calls' waits. */
export function openWaits(run: RunLike & { phases: Array<PhaseLike & { toolWaits?: OpenWait['tools'] }> }): Map<string, OpenWait> {
  const open = new Map<string, OpenWait>()
  for (const phase of run.phases) {
    if (phase.deadlines || phase.toolWaits?.length) open.set(phase.id, { since: phase.deadlines?.since ?? null, tools: (phase.toolWaits ?? []).map(({ callId, kind, since }) => ({ callId, kind, since })) })
  }
  return open
}

export interface InsightTransition {
  db: Kysely<Database>
  workspaceId: string
  traceparent: string | null
}

const OUTCOME_OF = { approved: 'approve', revised: 'revise', rejected: 'reject', expired: 'expire' } as const
const byOf = (d: { override?: true; expired?: true }): DecidedBy => (d.expired ? 'expiry' : d.override ? 'override' : 'person')

/**
 * The rollup rows of the phases `run` moved from `before` (their statuses as read), the waits they ended, and the
 * events of it. `decided`: the change was a decision (a quorum's first approve moves no status but is one).
 */
export async function recordInsights(t: InsightTransition, run: RunLike & { createdAt: string; finishedAt: string | null }, before: { status: string; phases: string[] }, open: Map<string, OpenWait>, decided: boolean): Promise<void> {
  const { db } = t
  for (const [i, phase] of run.phases.entries()) {
    const was = before.status === 'new' ? 'pending' : before.phases[i]!
    const last = phase.decisions.at(-1)
    if (decided && was === 'awaiting_decision' && last) {
      await emitInsight(db, { type: 'decision', agentId: phase.agentId, decision: last.decision as 'approve', by: byOf(last) })
    }
    if (was === phase.status && !(decided && phase.status === 'awaiting_decision')) continue
    const waits = open.get(phase.id)
    if (isCounted(phase)) await upsertPhaseRow(db, t.workspaceId, run, phase)
    if (was === 'awaiting_decision' && phase.status !== 'awaiting_decision' && waits?.since) await decisionWaitEnded(t, run, phase, waits.since)
    if (run.status === 'canceled' && waits) {
      for (const tool of waits.tools) {
        await emitInsight(db, { type: 'wait_ended', kind: tool.kind, outcome: 'cancel', since: tool.since, at: run.finishedAt ?? tool.since, decidedBy: [], runId: run.id, phaseRunId: phase.id, callId: tool.callId, traceparent: t.traceparent })
      }
    }
    if (ACTIVE.includes(was) && !ACTIVE.includes(phase.status) && phase.agentId !== NIL_UUID && tracesListen(db)) {
      await emitInsight(db, { type: 'task_settled', run, phase, traceparent: t.traceparent })
    }
  }
  if (!FINISHED.includes(before.status) && FINISHED.includes(run.status) && tracesListen(db)) await emitInsight(db, { type: 'run_finished', run, traceparent: t.traceparent })
}

/** The decision wait that began at `since` ended in this change: its row (a decision ended it) and its event. */
async function decisionWaitEnded(t: InsightTransition, run: RunLike & { finishedAt: string | null }, phase: PhaseLike, since: string): Promise<void> {
  const wait = endedWaits(phase).at(-1)
  const ended = wait && wait.seq === phase.decisions.length - 1 && wait.at >= since ? wait : undefined
  if (ended && isCounted(phase)) {
    const row = waitRow(t.workspaceId, run, phase, ended, since)
    const added = await t.db.insertInto('insight_waits').values(row).onConflict((oc) => oc.columns(['phase_run_id', 'seq']).doNothing()).returning('seq').executeTakeFirst()
    if (added && row.decision_ms !== null) await decisionTimeAdded(t.db, row, Number(row.decision_ms))
  }
  let outcome: WaitOutcome = 'cancel'
  let decidedBy: string[] = []
  if (ended) {
    outcome = OUTCOME_OF[ended.outcome]
    const round = phase.decisions.slice(phase.decisions.findLastIndex((d, k) => k < ended.seq && d.decision === 'revise') + 1, ended.seq + 1)
    const enders = ended.outcome === 'approved' ? round.filter((d) => d.decision === 'approve') : [phase.decisions[ended.seq]!]
    decidedBy = ended.outcome === 'expired' ? ['system'] : enders.map((d) => d.handle ?? 'unknown')
  }
  await emitInsight(t.db, {
    type: 'wait_ended', kind: 'decision', outcome, since, at: ended?.at ?? run.finishedAt ?? since, decidedBy,
    runId: run.id, phaseRunId: phase.id, callId: null, traceparent: t.traceparent,
  })
}

type CountColumn = 'tool_auto' | 'tool_approved' | 'tool_denied' | 'tool_failed' | 'questions'

async function upsertPhaseRow(db: Kysely<Database>, workspaceId: string, run: RunLike, phase: PhaseLike & { startedAt: string }): Promise<void> {
  const row = phaseRow(workspaceId, run, phase, [])
  const count = (where: (eb: ExpressionBuilder<Database, 'tool_calls'>) => Expression<SqlBool>) =>
    db.selectFrom('tool_calls').select((eb) => eb.fn.countAll<number>().as('n')).where('tool_calls.run_id', '=', run.id).where('tool_calls.phase_run_id', '=', phase.id).where(where)
  const tool = (eb: ExpressionBuilder<Database, 'tool_calls'>) => eb('tool_calls.name', '<>', ASK_OPERATOR)
  const counts: Record<CountColumn, ReturnType<typeof count>> = {
    tool_auto: count((eb) => eb.and([tool(eb), eb('tool_calls.approval', 'is', null)])),
    tool_approved: count((eb) => eb.and([tool(eb), eb('tool_calls.approval', 'like', '%"decision":"approve"%')])),
    tool_denied: count((eb) => eb.and([tool(eb), eb('tool_calls.approval', 'like', '%"decision":"deny"%')])),
    tool_failed: count((eb) => eb.and([tool(eb), eb('tool_calls.status', '=', 'failed')])),
    questions: count((eb) => eb('tool_calls.name', '=', ASK_OPERATOR)),
  }
  const { phase_run_id: _id, ...rest } = row
  const updated = Object.keys(rest) as Array<keyof Omit<InsightPhaseRunTable, 'phase_run_id'>>
  const old = await db.selectFrom('insight_phase_runs').selectAll().where('phase_run_id', '=', phase.id).executeTakeFirst()
  const now = await db
    .insertInto('insight_phase_runs')
    .values({ ...row, ...counts })
    .onConflict((oc) => oc.column('phase_run_id').doUpdateSet((eb) => Object.fromEntries(updated.map((column) => [column, eb.ref(`excluded.${column}`)])) as never))
    .returningAll()
    .executeTakeFirstOrThrow()
  await phaseRowMoved(db, old, now)
}
