// The scorecard rollups, kept by the run engine in the transaction of the change that moves them: machine.ts
// persistRun notes the waits open before it writes (their start lives in the phase's deadlines and toolWaits,
// which the clocks clear), then rewrites the rollup row of every phase run the change moved and adds the wait it
// ended (the tool-call counts from the phase run's calls, through tool_calls' run index), with a note of the
// change (insight_unfolded) from which the fold (fold.ts) moves the summed rollups per day, hour and stream or
// cycle (day-rollup.ts) later, off the run's path. It also tells the metrics and the traces (events.ts) of the
// decisions, ended waits, settled tasks and finished runs.
import { PostgresAdapter, sql, type Expression, type Kysely, type QueryCreator } from 'kysely'
import type { Database } from '../db/database.js'
import { prepared } from '../db/prepared.js'
import type { InsightPhaseRunTable } from './insights.table.js'
import { FIGURE_COLUMNS, figuresText } from './day-rollup.js'
import { ASK_OPERATOR, endedWaits, isCounted, phaseRow, waitRow, type PhaseLike, type RunLike } from './rollup-rows.js'
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
    if (isCounted(phase)) await upsertPhaseRow(db, t.workspaceId, run, phase, was === 'pending')
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
  // Told always: the metrics count finished runs (src/runs/metrics.ts), the traces end the run's span.
  if (!FINISHED.includes(before.status) && FINISHED.includes(run.status)) await emitInsight(db, { type: 'run_finished', run, traceparent: t.traceparent })
}

/** The decision wait that began at `since` ended in this change: its row (a decision ended it) and its event. */
async function decisionWaitEnded(t: InsightTransition, run: RunLike & { finishedAt: string | null }, phase: PhaseLike, since: string): Promise<void> {
  const wait = endedWaits(phase).at(-1)
  const ended = wait && wait.seq === phase.decisions.length - 1 && wait.at >= since ? wait : undefined
  if (ended && isCounted(phase)) {
    const row = waitRow(t.workspaceId, run, phase, ended, since)
    // The summed rows take its decision time from the fold: the phase run's note (written with its row, just
    // before) holds the last wait row before this one.
    await t.db.insertInto('insight_waits').values(row).onConflict((oc) => oc.columns(['phase_run_id', 'seq']).doNothing()).execute()
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

// Compiled once (db/prepared.ts): they run for every phase a change moves, and building and compiling them each
// time cost more than running them. SQLite counts a phase run's tool calls here (phaseRow), from a select of its
// calls through tool_calls' run index: five count subqueries in the upsert cost it about 100 µs a row where this
// select costs a few. PostgreSQL counts them in the statement that writes the row (callFigures), one round trip
// fewer at every change but a phase run's first.
const callsOf = (db: QueryCreator<Database>, runId: Expression<string>, phaseRunId: Expression<string>) =>
  db.selectFrom('tool_calls').select(['phase_run_id', 'name', 'status', 'approval']).where('run_id', '=', runId).where('phase_run_id', '=', phaseRunId)
const selectCalls = prepared(2, (db, runId: Expression<string>, phaseRunId: Expression<string>) => callsOf(db, runId, phaseRunId))
type Column = keyof InsightPhaseRunTable
const COLUMNS = Object.keys({
  phase_run_id: 1, workspace_id: 1, agent_id: 1, run_id: 1, stream_id: 1, cycle_id: 1, trigger_name: 1, phase_id: 1, phase_name: 1, started_at: 1,
  gated: 1, answered: 1, approved: 1, revised: 1, rejected: 1, expired: 1, overridden: 1, tool_auto: 1, tool_approved: 1, tool_denied: 1,
  tool_failed: 1, questions: 1, input_tokens: 1, output_tokens: 1, cost_usd: 1, run_failed: 1,
} satisfies Record<Column, 1>) as Column[]
// The figures counted from the phase run's calls, and the columns the PostgreSQL writer is given (the rest).
const CALL_FIGURES: Column[] = ['tool_auto', 'tool_approved', 'tool_denied', 'tool_failed', 'questions']
const GIVEN = COLUMNS.filter((c) => !CALL_FIGURES.includes(c))
/**
 * PostgreSQL: the call figures of the phase run, as phaseRow counts them from its calls (its own, in tool_calls'
 * run index), as subqueries for the row's values. test/insights/scorecards.test.ts checks both databases' figures
 * against the same history of calls of each kind. `count(id)`: a text with a `*` is never prepared (db/connect.ts).
 */
function callFigures(runId: Expression<string>, phaseRunId: Expression<string>): Record<string, Expression<number>> {
  const tool = sql`name <> ${sql.lit(ASK_OPERATOR)}`
  const decided = (decision: string) => sql`${tool} and (approval::json ->> 'decision') = ${sql.lit(decision)}`
  const counted = {
    tool_auto: sql`${tool} and approval is null`,
    tool_approved: decided('approve'),
    tool_denied: decided('deny'),
    tool_failed: sql`${tool} and status = 'failed'`,
    questions: sql`name = ${sql.lit(ASK_OPERATOR)}`,
  }
  return Object.fromEntries(
    Object.entries(counted).map(([column, filter]) => [column, sql<number>`(select count(id) filter (where ${filter}) from tool_calls where run_id = ${runId} and phase_run_id = ${phaseRunId})`]),
  )
}
// A phase run's keys (its agent, run, stream, cycle, phase and start) never change once its row is written: a move
// sets its figures only, which no index holds (migration 0139), so SQLite rewrites no index entry for it.
const KEYS = new Set<Column>(['phase_run_id', 'workspace_id', 'agent_id', 'run_id', 'stream_id', 'cycle_id', 'trigger_name', 'phase_id', 'phase_name', 'started_at'])
const FIGURES = COLUMNS.filter((c) => !KEYS.has(c))
const upsertQuery = (db: QueryCreator<Database>, values: Partial<Record<Column, Expression<unknown>>>) =>
  db
    .insertInto('insight_phase_runs')
    .values(values as never)
    .onConflict((oc) => oc.column('phase_run_id').doUpdateSet((eb) => Object.fromEntries(FIGURES.map((c) => [c, eb.ref(`excluded.${c}`)])) as never))
const columnValues = (columns: Column[], args: Array<Expression<unknown>>) => Object.fromEntries(columns.map((c, i) => [c, args[i]]))
const upsertRow = prepared<unknown[], never>(COLUMNS.length, (db, ...args: Array<Expression<unknown>>) => upsertQuery(db, columnValues(COLUMNS, args)))

// The note of a phase run whose row changes (fold.ts adds the change to the summed rows later): its keys, its row's
// figures as they were (figuresText) and the last of its wait rows, both read before this change writes them. A
// note already there stays as it is (what the summed rows hold is still its `old`); the update that keeps it takes
// its row lock on PostgreSQL, so a fold that holds the note makes this change wait for it (fold.ts, "Why it is
// exact").
const NOTE_KEYS = ['phase_run_id', 'workspace_id', 'agent_id', 'stream_id', 'cycle_id', 'started_at'] as const
const noteQuery = (db: QueryCreator<Database>, keys: Array<Expression<unknown>>, old: Expression<string | null>, oldWaitSeq: Expression<number>) =>
  db
    .insertInto('insight_unfolded')
    .values({ ...(Object.fromEntries(NOTE_KEYS.map((c, i) => [c, keys[i]])) as Record<(typeof NOTE_KEYS)[number], never>), old, old_wait_seq: oldWaitSeq })
    .onConflict((oc) => oc.column('phase_run_id').doUpdateSet({ old: (eb) => eb.ref('insight_unfolded.old') }))
// What the note reads in the statement (PostgreSQL): the row's figures as they were (figuresText's form; only the
// cost can be null), and the last of its wait rows.
const OLD_FIGURES = sql.join(FIGURE_COLUMNS.map((c) => (c === 'cost_usd' ? sql`coalesce(cost_usd::text, '')` : sql.ref(c))))
const oldRowOf = (id: Expression<string>) => sql<string | null>`(select concat_ws(',', ${OLD_FIGURES}) from insight_phase_runs where phase_run_id = ${id})`
const lastWaitOf = (id: Expression<string>) => sql<number>`coalesce((select max(seq) from insight_waits where phase_run_id = ${id}), -1)`
/** A note whose `old` and `old_wait_seq` are given (SQLite reads them first: as subqueries of the insert they cost it several times more). */
const noteGiven = prepared<unknown[], never>(NOTE_KEYS.length + 2, (db, ...args: Array<Expression<unknown>>) =>
  noteQuery(db, args.slice(0, NOTE_KEYS.length), args[NOTE_KEYS.length] as Expression<string | null>, args[NOTE_KEYS.length + 1] as Expression<number>),
)
const selectOldRow = prepared(1, (db, id: Expression<string>) => db.selectFrom('insight_phase_runs').select(FIGURE_COLUMNS).where('phase_run_id', '=', id))
const selectNote = prepared(1, (db, id: Expression<string>) => db.selectFrom('insight_unfolded').select('old_wait_seq').where('phase_run_id', '=', id))
const selectLastWait = prepared(1, (db, id: Expression<string>) => db.selectFrom('insight_waits').select((eb) => eb.fn.max('seq').as('seq')).where('phase_run_id', '=', id))
/** How a change's note learns the row as it was and its last wait row: none (a new phase run), read, or read but no wait (no decision yet). */
export type Before = 'none' | 'row' | 'row and waits'
// PostgreSQL: every statement is a round trip, so the note, the calls' figures and the row are one statement (the
// note a data-modifying WITH query, which reads the row as it was before the statement).
const writerOf = (before: Before) =>
  prepared<unknown[], never>(NOTE_KEYS.length + GIVEN.length, (db, ...args: Array<Expression<unknown>>) => {
    const id = args[0] as Expression<string>
    const old = before === 'none' ? sql<string | null>`null` : oldRowOf(id)
    const seq = before === 'row and waits' ? lastWaitOf(id) : sql<number>`-1`
    const given = columnValues(GIVEN, args.slice(NOTE_KEYS.length))
    // A phase run just begun has no call yet (upsertPhaseRow): its call figures keep their defaults, 0.
    const calls = before === 'none' ? {} : callFigures(given.run_id as Expression<string>, id)
    return upsertQuery(db.with('note', (qc) => noteQuery(qc as QueryCreator<Database>, args.slice(0, NOTE_KEYS.length), old, seq) as never) as unknown as QueryCreator<Database>, { ...given, ...calls })
  })
const WRITERS: Record<Before, ReturnType<typeof writerOf>> = { none: writerOf('none'), row: writerOf('row'), 'row and waits': writerOf('row and waits') }
const notesOnly = (before: Before) =>
  prepared<unknown[], never>(NOTE_KEYS.length, (db, ...args: Array<Expression<unknown>>) => {
    const id = args[0] as Expression<string>
    return noteQuery(db, args, before === 'none' ? sql`null` : oldRowOf(id), before === 'row and waits' ? lastWaitOf(id) : sql`-1`)
  })
const PG_NOTES: Record<Before, ReturnType<typeof notesOnly>> = { none: notesOnly('none'), row: notesOnly('row'), 'row and waits': notesOnly('row and waits') }

/**
 * Rewrites the phase run's row and notes the change for the fold. `begun`: the phase left `pending`, so it has no
 * row, no wait row and no tool call yet (a phase run's id is new with its run, and no move leads back to
 * `pending`, transitions.ts), and none is read.
 */
async function upsertPhaseRow(db: Kysely<Database>, workspaceId: string, run: RunLike, phase: PhaseLike & { startedAt: string }, begun: boolean): Promise<void> {
  // Wait rows are written for decisions (decisionWaitEnded, after this): a phase without one has none.
  const before: Before = begun ? 'none' : phase.decisions.length === 0 ? 'row' : 'row and waits'
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    // Its call figures are counted by the statement (callFigures).
    const row = phaseRow(workspaceId, run, phase, [])
    await WRITERS[before](db, ...NOTE_KEYS.map((c) => row[c]), ...GIVEN.map((c) => row[c]))
    return
  }
  const row = phaseRow(workspaceId, run, phase, begun ? [] : await selectCalls(db, run.id, phase.id))
  await noteChange(db, row, before)
  await upsertRow(db, ...COLUMNS.map((c) => row[c]))
}

/**
 * Notes a change of a phase run's row for the fold, just before the row is written: `before` says what to read of
 * it as it was (`none`: the row is new). The engine calls it; so does code that writes per-phase-run rows itself
 * (the tests, with `row and waits`).
 */
export async function noteChange(db: Kysely<Database>, row: Pick<InsightPhaseRunTable, (typeof NOTE_KEYS)[number]>, before: Before): Promise<void> {
  const keys = NOTE_KEYS.map((c) => row[c])
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await PG_NOTES[before](db, ...keys)
    return
  }
  // SQLite writes one transaction at a time: a note already there stays as it is, and nothing need be written.
  if (before !== 'none' && (await selectNote(db, row.phase_run_id)).length > 0) return
  const [was] = before === 'none' ? [] : await selectOldRow(db, row.phase_run_id)
  const seq = before === 'row and waits' ? ((await selectLastWait(db, row.phase_run_id))[0]?.seq ?? -1) : -1
  await noteGiven(db, ...keys, was ? figuresText(was) : null, seq)
}
