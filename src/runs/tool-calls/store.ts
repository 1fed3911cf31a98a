// Tool calls (docs/tools-and-approvals.md, "Tools"; docs/tools-and-approvals.md): the rows, as the API shows them, and their events.
// The operator actions on them — an approval decision, an answer to a question — are waits (src/waits/).
import type { Kysely, Selectable } from 'kysely'
import type { Database } from '../../db/database.js'
import { now } from '../../ids.js'
import { appendEvent } from '../../events/store.js'
import type { Transition } from '../machine/machine.js'
import type { DeliveryJob } from '../machine/jobs.js'
import type { PhaseRun, Run } from '../schemas.js'
import type { Via } from '../../http/via.js'
import type { ToolCallStatus, ToolCallTable } from './tool-calls.table.js'
import type { LoopState } from '../adapters/tool-loop.js'
import { LISTED_OUTPUT_CHARS } from '../limits.js'

declare module '../../jobs/registry.js' {
  interface JobPayloads {
    'tools.call': { callId: string }
  }
}

// answered_by is optional here: the rows built before insertion leave it out (null in the table).
export type ToolCallRow = Omit<Selectable<ToolCallTable>, 'answered_by'> & { answered_by?: string | null }

/** The job that makes an approved call of the task tool route, once (keyed by the call). */
export const CALL_TOOL_JOB = 'tools.call'
export const callKey = (callId: string) => `tool-call:${callId}`

export interface ToolCallApproval {
  required: true
  decision: 'approve' | 'deny' | null
  note: string | null
  principalId: string | null
  handle: string | null
  at: string | null
  /** how a person's decision came (src/http/via.ts); absent on the system's */
  via?: Via
}

/** Who answered a question (`tandem.ask_operator`), and how. */
export interface AnsweredBy {
  principalId: string
  handle: string | null
  at: string
  via: Via
}

export interface ToolCall {
  id: string
  runId: string
  phaseRunId: string
  attempt: number
  name: string
  input: unknown
  output: string | null
  error: string | null
  status: ToolCallStatus
  approval: ToolCallApproval | null
  answeredBy: AnsweredBy | null
  startedAt: string
  finishedAt: string | null
}

/** What is stored with the first call of a step: the loop's state, and the delivery job that resumes it. */
export interface StoredLoop extends LoopState {
  job: DeliveryJob
}

function cut(text: string | null): string | null {
  if (text === null || text.length <= LISTED_OUTPUT_CHARS) return text
  return `${text.slice(0, LISTED_OUTPUT_CHARS)}… [cut at ${LISTED_OUTPUT_CHARS} of ${text.length} characters]`
}

/** The call as listed (output cut at LISTED_OUTPUT_CHARS), or `whole` as the agent that made it reads it. */
export function toToolCall(row: ToolCallRow, whole = false): ToolCall {
  return {
    id: row.id, runId: row.run_id, phaseRunId: row.phase_run_id, attempt: Number(row.attempt), name: row.name, input: JSON.parse(row.input),
    output: whole ? row.output : cut(row.output), error: row.error, status: row.status, approval: row.approval === null ? null : JSON.parse(row.approval), answeredBy: row.answered_by ? JSON.parse(row.answered_by) : null,
    startedAt: row.started_at, finishedAt: row.finished_at,
  }
}

export async function recordToolCallEvent(db: Kysely<Database>, row: ToolCallRow, streamId: string, type: 'tool_call.created' | 'tool_call.updated', traceparent: string | null): Promise<void> {
  await appendEvent(db, { workspaceId: row.workspace_id, streamId, type, data: toToolCall(row), traceparent })
}

export async function listToolCalls(db: Kysely<Database>, workspaceId: string, runId: string, limit: number, after?: string): Promise<ToolCall[] | null> {
  const run = await db.selectFrom('runs').select('id').where('id', '=', runId.toLowerCase()).where('workspace_id', '=', workspaceId).executeTakeFirst()
  if (!run) return null
  let query = db.selectFrom('tool_calls').selectAll().where('run_id', '=', run.id)
  if (after) query = query.where('id', '>', after)
  return (await query.orderBy('id').limit(limit).execute()).map((row) => toToolCall(row))
}

export async function callsOfTask(db: Kysely<Database>, taskId: string): Promise<ToolCallRow[]> {
  return db.selectFrom('tool_calls').selectAll().where('task_id', '=', taskId).orderBy('step').orderBy('position').execute()
}

export async function updateCall(db: Kysely<Database>, id: string, changes: Partial<ToolCallTable>): Promise<ToolCallRow> {
  return db.updateTable('tool_calls').set(changes).where('id', '=', id).returningAll().executeTakeFirstOrThrow()
}

/**
 * What a call of the task tool route reads when it was still in flight as its task ended: the process making it
 * stopped (a restart), or the task ended first. Settled as failed, the way the model loop's calls are (exec.ts).
 */
export const UNSETTLED = 'interrupted: the task ended while this call was in flight (Tandem stopped, or the task ended first); its outcome was not recorded, and it may or may not have taken effect.'

const ACTIVE: ReadonlyArray<PhaseRun['status']> = ['running', 'awaiting_tool_approval', 'awaiting_input']

/**
 * persistRun, for the phases that stopped being at work in this step (answered, failed, canceled): their calls of
 * the task tool route still in flight (dispatched, never finished) whose task is closed are settled as failed
 * (UNSETTLED), so none stays `running` forever. A request that was really still making one finds it settled and
 * leaves it so (exec.ts finishCall).
 */
export async function settleEndedCalls(t: Transition, run: Run, before: { status: string; phases: ReadonlyArray<PhaseRun['status']> }): Promise<void> {
  if (before.status === 'new' || t.routeCalls === false) return
  const ended = run.phases.filter((p) => ACTIVE.includes(before.phases[p.index]!) && !ACTIVE.includes(p.status)).map((p) => p.id)
  if (ended.length === 0) return
  const rows = await t.db
    .selectFrom('tool_calls')
    .innerJoin('run_tasks', 'run_tasks.id', 'tool_calls.task_id')
    .select('tool_calls.id')
    .where('tool_calls.run_id', '=', run.id)
    .where('tool_calls.phase_run_id', 'in', ended)
    .where('tool_calls.step', '=', 0)
    .where('tool_calls.status', '=', 'running')
    .where('tool_calls.dispatched_at', 'is not', null)
    .where('tool_calls.finished_at', 'is', null)
    .where('run_tasks.state', '!=', 'open')
    .execute()
  for (const { id } of rows) {
    const updated = await updateCall(t.db, id, { status: 'failed', error: UNSETTLED, finished_at: now() })
    await recordToolCallEvent(t.db, updated, run.streamId, 'tool_call.updated', t.traceparent)
  }
}
