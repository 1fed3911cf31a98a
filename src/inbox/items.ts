// What waits for a principal: the inbox items of a workspace, and who may act on each. Items come from
// sources: decisions (phases awaiting a decision), read from the workspace's waiting runs, with their policy's
// deadlines, escalation and approvals; and tool approvals and questions, read from the waiting calls, each with
// its own deadlines and escalation on the same clock (the phase's `toolWaits`).
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { approversOf, mayAct, mayDecide, waitOf } from '../waits/who.js'
import { callWaitsWhere } from '../waits/kinds.js'
import type { Principal } from '../principals/store.js'
import type { PhaseRun, Run } from '../runs/schemas.js'
import type { InboxItem } from './schemas.js'

export const SUMMARY_LENGTH = 500
/** The inbox reads at most this many waiting runs of a workspace (the oldest first). */
export const MAX_WAITING_RUNS = 5000

export type Caller = Pick<Principal, 'principalId' | 'handle' | 'role' | 'workspaceId'>

/** The pool rule of docs/runs-and-events.md, kept in one place (src/waits/who.ts), with escalation. */
export { mayDecide }

export const itemKey = (item: Pick<InboxItem, 'kind' | 'phaseRunId' | 'callId'>) => `${item.kind}:${item.phaseRunId}:${item.callId ?? ''}`

interface Context {
  streams: Map<string, string>
  messages: Map<string, string>
  claims: Map<string, string>
}

function decisionItem(run: Run, phase: PhaseRun, context: Context): InboxItem {
  const summary = phase.output?.text ?? phase.goal
  return {
    kind: 'decision',
    runId: run.id,
    phaseRunId: phase.id,
    callId: null,
    streamId: run.streamId,
    streamName: context.streams.get(run.streamId) ?? '',
    triggerName: run.triggerName,
    phaseName: phase.phaseName,
    summary: summary.slice(0, SUMMARY_LENGTH),
    // An agent's phase waits from its output's message; people's work from the phase's start.
    waitingSince: (phase.output && context.messages.get(phase.output.messageId)) ?? phase.startedAt ?? run.createdAt,
    remindAt: phase.deadlines?.remindAt ?? null,
    escalateAt: phase.deadlines?.escalateAt ?? null,
    expireAt: phase.deadlines?.expireAt ?? null,
    escalated: phase.escalated ?? false,
    claimedBy: context.claims.get(phase.id) ?? null,
    approvals: phase.approvals ?? { have: 0, need: 1 },
  }
}

/** What the items of these waiting phases show beside the run: stream names, output times, live claims. */
async function contextOf(db: Kysely<Database>, waiting: Array<[Run, PhaseRun]>): Promise<Context> {
  const streamIds = [...new Set(waiting.map(([run]) => run.streamId))]
  const messageIds = waiting.flatMap(([, phase]) => (phase.output ? [phase.output.messageId] : []))
  const phaseIds = waiting.map(([, phase]) => phase.id)
  const [streams, messages, claims] = await Promise.all([
    db.selectFrom('streams').select(['id', 'name']).where('id', 'in', streamIds).execute(),
    messageIds.length ? db.selectFrom('messages').select(['id', 'created_at']).where('id', 'in', messageIds).execute() : [],
    db.selectFrom('inbox_claims').select(['phase_run_id', 'handle']).where('phase_run_id', 'in', phaseIds).where('expires_at', '>', new Date().toISOString()).execute(),
  ])
  return {
    streams: new Map(streams.map((s) => [s.id, s.name])),
    messages: new Map(messages.map((m) => [m.id, m.created_at])),
    claims: new Map(claims.map((c) => [c.phase_run_id, c.handle])),
  }
}

/** The item of one phase awaiting a decision (the claim routes answer it without reading the whole inbox). */
export async function decisionItemOf(db: Kysely<Database>, run: Run, phase: PhaseRun): Promise<InboxItem> {
  return decisionItem(run, phase, await contextOf(db, [[run, phase]]))
}

/** Every decision waiting in the workspace that `caller` may act on. */
async function decisionItems(db: Kysely<Database>, caller: Caller): Promise<InboxItem[]> {
  const rows = await db.selectFrom('runs').select('document').where('workspace_id', '=', caller.workspaceId).where('status', '=', 'waiting').orderBy('id').limit(MAX_WAITING_RUNS).execute()
  const waiting: Array<[Run, PhaseRun]> = []
  for (const row of rows) {
    const run = JSON.parse(row.document) as Run
    // A phase the caller has approved in this round (a quorum still short) leaves their inbox: they are done with it.
    for (const phase of run.phases) if (phase.status === 'awaiting_decision' && mayDecide(caller, phase) && !approversOf(phase).has(caller.principalId)) waiting.push([run, phase])
  }
  if (waiting.length === 0) return []
  const context = await contextOf(db, waiting)
  return waiting.map(([run, phase]) => decisionItem(run, phase, context))
}

interface WaitingCall {
  id: string
  phase_run_id: string
  name: string
  input: string
  status: string
  started_at: string
}

/** The clock of a waiting call (absent on runs from before tool waits had one: no deadlines, not escalated). */
function toolItem(run: Run, phase: PhaseRun, row: WaitingCall, context: Context): InboxItem {
  const question = row.status !== 'awaiting_approval'
  const input = JSON.parse(row.input) as Record<string, unknown>
  const summary = question ? String(input.question ?? '') : `${row.name} ${row.input}`
  const wait = waitOf(phase, row.id)
  return {
    ...decisionItem(run, phase, context),
    kind: question ? 'question' : 'tool_approval', callId: row.id, summary: summary.slice(0, SUMMARY_LENGTH), waitingSince: row.started_at,
    remindAt: wait?.remindAt ?? null, escalateAt: wait?.escalateAt ?? null, expireAt: wait?.expireAt ?? null, escalated: wait?.escalated ?? false,
  }
}

/** Whether the call waits in the way its phase's status says (an approval while awaiting_tool_approval, a question while awaiting_input). */
const waitsNow = (phase: PhaseRun, row: Pick<WaitingCall, 'status'>) => phase.status === (row.status === 'awaiting_approval' ? 'awaiting_tool_approval' : 'awaiting_input')

const waitingCalls = (db: Kysely<Database>) =>
  db
    .selectFrom('tool_calls')
    .select(['tool_calls.id', 'tool_calls.phase_run_id', 'tool_calls.name', 'tool_calls.input', 'tool_calls.status', 'tool_calls.started_at'])
    .where((eb) => callWaitsWhere(eb))

/** The item of one waiting call (the clock's events carry it), or null when the call does not wait now. */
export async function toolItemOf(db: Kysely<Database>, run: Run, phase: PhaseRun, callId: string): Promise<InboxItem | null> {
  const row = await waitingCalls(db).where('tool_calls.id', '=', callId).executeTakeFirst()
  if (!row || !waitsNow(phase, row)) return null
  return toolItem(run, phase, row, await contextOf(db, [[run, phase]]))
}

/** The items of the calls the phase waits for now, oldest first (a claim takes the first: the phase's current wait). */
export async function phaseToolItems(db: Kysely<Database>, run: Run, phase: PhaseRun): Promise<InboxItem[]> {
  // Through the run's calls (tool_calls_run): no index leads with the phase run.
  const rows = (await waitingCalls(db).where('tool_calls.run_id', '=', run.id).where('tool_calls.phase_run_id', '=', phase.id).orderBy('tool_calls.id').execute()).filter((row) => waitsNow(phase, row))
  if (rows.length === 0) return []
  const context = await contextOf(db, [[run, phase]])
  return rows.map((row) => toolItem(run, phase, row, context))
}

/**
 * Tool calls awaiting an approval and questions awaiting an answer (docs/tools-and-approvals.md) in the workspace's
 * waiting runs, that `caller` may act on: an approval while its phase is awaiting_tool_approval, a question while
 * its phase is awaiting_input.
 */
async function toolItems(db: Kysely<Database>, caller: Caller): Promise<InboxItem[]> {
  const rows = await waitingCalls(db)
    .innerJoin('runs', 'runs.id', 'tool_calls.run_id')
    .select('runs.document')
    .where('runs.workspace_id', '=', caller.workspaceId)
    .where('runs.status', '=', 'waiting')
    .orderBy('tool_calls.id')
    .limit(MAX_WAITING_RUNS)
    .execute()
  const found: Array<{ run: Run; phase: PhaseRun; row: (typeof rows)[number] }> = []
  for (const row of rows) {
    const run = JSON.parse(row.document) as Run
    const phase = run.phases.find((p) => p.id === row.phase_run_id)
    if (phase && waitsNow(phase, row) && mayAct(caller, phase, row.id)) found.push({ run, phase, row })
  }
  if (found.length === 0) return []
  const context = await contextOf(db, found.map(({ run, phase }) => [run, phase]))
  return found.map(({ run, phase, row }) => toolItem(run, phase, row, context))
}

const SOURCES: Array<(db: Kysely<Database>, caller: Caller) => Promise<InboxItem[]>> = [decisionItems, toolItems]

/** The soonest deadline (expiry, else escalation); items without one sort after those with one. */
const deadlineOf = (item: InboxItem) => item.expireAt ?? item.escalateAt ?? '~'

/** The sort key of an item: soonest deadline, then oldest, then a stable tie-break. Also the cursor. */
export const sortKey = (item: InboxItem) => `${deadlineOf(item)}|${item.waitingSince}|${itemKey(item)}`

/** The caller's whole inbox, in order. */
export async function inboxOf(db: Kysely<Database>, caller: Caller): Promise<InboxItem[]> {
  const items = (await Promise.all(SOURCES.map((source) => source(db, caller)))).flat()
  return items.sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : sortKey(a) > sortKey(b) ? 1 : 0))
}
