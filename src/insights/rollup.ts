// The scorecard rollups, kept by the run engine in the transaction of the change that moves them: machine.ts
// persistRun notes the waits that are open before it writes (their start lives in the phase's deadlines, which
// the decision clock clears), then rewrites the rollup row of every phase run the change moved and adds the wait
// it ended. One statement per moved phase; a run with no tool calls reads nothing more (the counts are subqueries
// over tool_calls' run index).
import type { Expression, ExpressionBuilder, Kysely, SqlBool } from 'kysely'
import type { Database } from '../db/database.js'
import type { InsightPhaseRunTable } from './insights.table.js'
import { ASK_OPERATOR, endedWaits, isCounted, phaseRow, waitRow, type PhaseLike, type RunLike } from './rollup-rows.js'
import { waitEnded } from './wait-hooks.js'

/** Where each phase awaiting a decision began waiting, read before the decision clock clears it. */
export function openWaits(run: RunLike): Map<string, string> {
  const since = new Map<string, string>()
  for (const phase of run.phases) if (phase.deadlines) since.set(phase.id, phase.deadlines.since)
  return since
}

type CountColumn = 'tool_auto' | 'tool_approved' | 'tool_denied' | 'tool_failed' | 'questions'

/**
 * The rollup rows of the phases `run` moved from `before` (their statuses as read), and the waits they ended.
 * `decided`: the change was a decision (a quorum's first approve moves no status but counts an override).
 */
export async function recordInsights(db: Kysely<Database>, workspaceId: string, run: RunLike, before: { status: string; phases: string[] }, since: Map<string, string>, decided: boolean): Promise<void> {
  for (const [i, phase] of run.phases.entries()) {
    if (!isCounted(phase)) continue
    const was = before.status === 'new' ? 'pending' : before.phases[i]
    if (was === phase.status && !(decided && phase.status === 'awaiting_decision')) continue
    await upsertPhaseRow(db, workspaceId, run, phase)
    const started = since.get(phase.id)
    if (was !== 'awaiting_decision' || started === undefined) continue
    const wait = endedWaits(phase).at(-1)
    if (!wait || wait.seq !== phase.decisions.length - 1 || wait.at < started) continue
    const row = waitRow(workspaceId, run, phase, wait, started)
    await db.insertInto('insight_waits').values(row).onConflict((oc) => oc.columns(['phase_run_id', 'seq']).doNothing()).execute()
    waitEnded(db, { kind: 'decision', phase, row, decisions: phase.decisions.slice(phase.decisions.findLastIndex((d, k) => k < wait.seq && d.decision === 'revise') + 1, wait.seq + 1) })
  }
}

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
  await db
    .insertInto('insight_phase_runs')
    .values({ ...row, ...counts })
    .onConflict((oc) => oc.column('phase_run_id').doUpdateSet((eb) => Object.fromEntries(updated.map((column) => [column, eb.ref(`excluded.${column}`)])) as never))
    .execute()
}
