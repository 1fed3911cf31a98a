// The kinds of wait, as data (docs/architecture-engine.md "Waits"). A wait is something a person must do before
// a run goes on: decide a phase, approve or deny a tool call, answer a question. Each kind names the phase
// status it holds the phase in and, for the waits on a tool call, which tool_calls rows wait in that way. The
// clock (clock.ts), the inbox (src/inbox/items.ts), the pool rule (who.ts) and the tool hosts read it here.
//
// A leaf: types and Kysely's expression builder only, so any layer may import it.
import type { Expression, ExpressionBuilder, SqlBool } from 'kysely'
import type { Database } from '../db/database.js'
import type { PhaseRun, ToolWait } from '../runs/schemas.js'
import type { ToolCallTable } from '../runs/tool-calls/tool-calls.table.js'

/** The tool an agent calls to ask the phase's operators a question: the call waits, unfinished, for the answer. */
export const ASK_OPERATOR = 'tandem.ask_operator'

export type WaitKindName = 'decision' | ToolWait['kind']

type CallFields = Pick<ToolCallTable, 'status' | 'name' | 'finished_at'>

export interface WaitKind {
  name: WaitKindName
  /** The phase's status while it waits this way. */
  phaseStatus: PhaseRun['status']
}

/** A kind of wait on a tool call: which tool_calls rows wait in this way. */
export interface CallWaitKind extends WaitKind {
  name: ToolWait['kind']
  /** Whether this row waits in this way. */
  callWaits(row: CallFields): boolean
  /** The same test as SQL over tool_calls. */
  callWhere(eb: ExpressionBuilder<Database, 'tool_calls'>): Expression<SqlBool>
}

const toolApproval: CallWaitKind = {
  name: 'tool_approval',
  phaseStatus: 'awaiting_tool_approval',
  callWaits: (row) => row.status === 'awaiting_approval',
  callWhere: (eb) => eb('tool_calls.status', '=', 'awaiting_approval'),
}

const question: CallWaitKind = {
  name: 'question',
  phaseStatus: 'awaiting_input',
  // A question waits while its call runs unfinished.
  callWaits: (row) => row.name === ASK_OPERATOR && row.status === 'running' && row.finished_at === null,
  callWhere: (eb) => eb.and([eb('tool_calls.name', '=', ASK_OPERATOR), eb('tool_calls.status', '=', 'running'), eb('tool_calls.finished_at', 'is', null)]),
}

/** Every kind of wait by name. */
export const WAIT_KINDS = {
  decision: { name: 'decision', phaseStatus: 'awaiting_decision' } satisfies WaitKind,
  tool_approval: toolApproval,
  question,
}

/** The kinds that wait on a tool call, in the order a phase waits on them (an approval before a question). */
export const CALL_WAIT_KINDS: ReadonlyArray<CallWaitKind> = [toolApproval, question]

/** The kind of wait a tool call is in, or null when it waits for no one. */
export function callWaitKind(row: CallFields): ToolWait['kind'] | null {
  return CALL_WAIT_KINDS.find((kind) => kind.callWaits(row))?.name ?? null
}

/** Whether the tool call waits for an operator (an approval or an answer). */
export const awaitsOperator = (row: CallFields): boolean => callWaitKind(row) !== null

/** SQL over tool_calls: the rows that wait for an operator, in the way of `kind` or of any kind. */
export function callWaitsWhere(eb: ExpressionBuilder<Database, 'tool_calls'>, kind?: ToolWait['kind']): Expression<SqlBool> {
  const kinds = CALL_WAIT_KINDS.filter((k) => kind === undefined || k.name === kind)
  return eb.or(kinds.map((k) => k.callWhere(eb)))
}

/** The phase status the task's waiting calls call for: an approval first, then a question; null when none waits. */
export function waitingStatus(rows: ReadonlyArray<CallFields>): 'awaiting_tool_approval' | 'awaiting_input' | null {
  const kind = CALL_WAIT_KINDS.find((k) => rows.some(k.callWaits))
  return kind ? (kind.phaseStatus as 'awaiting_tool_approval' | 'awaiting_input') : null
}

/** The phase status of a kind of call wait. */
export const TOOL_WAIT_STATUS = Object.fromEntries(CALL_WAIT_KINDS.map((k) => [k.name, k.phaseStatus])) as Record<ToolWait['kind'], PhaseRun['status']>
/** The wait kind of a phase status: which calls' clocks run while the phase is in it. */
export const TOOL_WAIT_KIND = Object.fromEntries(CALL_WAIT_KINDS.map((k) => [k.phaseStatus, k.name])) as Partial<Record<PhaseRun['status'], ToolWait['kind']>>
