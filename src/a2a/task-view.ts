// A run as an A2A Task (docs/a2a.md "State mapping"): the run's status and its waiting phase give the TaskState
// and the status message (who must act on what, by when); each phase's output is an artifact; the caller's
// messages and the status messages recorded as the run changed (history.ts), oldest first, are the history.
// Read-only: every instance computes the same task from the database, so any of them answers any task.
import { Role, TaskState, type Artifact, type Message, type Task, type TaskStatus } from '@a2a-js/sdk'
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import type { PhaseRun, Run } from '../runs/schemas.js'
import { mayDecide } from '../waits/who.js'
import { normalizeHandle } from '../principals/handles.js'
import type { Principal } from '../principals/store.js'

export const MAX_HISTORY = 100

export interface TandemStatusMeta {
  waitingFor: 'decision' | 'tool_approval' | 'question' | null
  phaseRunId: string | null
  phaseName: string | null
  callId: string | null
  operators: string[]
  approvals: { have: number; need: number } | null
  expireAt: string | null
}

/** What a task's view needs besides its run: the starter (the pool rule for questions) and the waiting calls. */
export interface TaskContext {
  starter: Pick<Principal, 'role' | 'handle'>
  /** The waiting call of the waiting phase, if any: its id, tool name and input. */
  call: { id: string; name: string; input: Record<string, unknown> } | null
  /** The task's history as recorded: the caller's messages and the past status messages, oldest first (the latest MAX_HISTORY). */
  messages: HistoryRow[]
  /** The task's last change (a2a_tasks.updated_at), null when unknown. */
  updatedAt: string | null
}

export interface HistoryRow {
  messageId: string
  role: 'user' | 'agent'
  text: string
  createdAt: string
  /** Agent rows: the TaskState's name and the status metadata. */
  state: string | null
  meta: TandemStatusMeta | null
}

const text = (value: string) => ({ content: { $case: 'text' as const, value }, mediaType: 'text/plain', filename: '', metadata: undefined })

const who = (phase: PhaseRun) => (phase.operatorPool.length === 0 ? 'any member' : phase.operatorPool.map((h) => `@${normalizeHandle(h)}`).join(', '))
const by = (expireAt: string | null | undefined) => (expireAt ? ` by ${expireAt}` : '')

function waitingPhase(run: Run): PhaseRun | undefined {
  return run.phases.find((p) => p.status === 'awaiting_decision' || p.status === 'awaiting_tool_approval' || p.status === 'awaiting_input')
}

/** The TaskState and status text of the run, and the metadata of its status message. */
export function stateOf(run: Run, context: Pick<TaskContext, 'starter' | 'call'>): { state: TaskState; text: string | null; meta: TandemStatusMeta } {
  const meta: TandemStatusMeta = { waitingFor: null, phaseRunId: null, phaseName: null, callId: null, operators: [], approvals: null, expireAt: null }
  switch (run.status) {
    case 'queued':
      return { state: TaskState.TASK_STATE_SUBMITTED, text: null, meta }
    case 'running':
      return { state: TaskState.TASK_STATE_WORKING, text: null, meta }
    case 'succeeded':
      return { state: TaskState.TASK_STATE_COMPLETED, text: null, meta }
    case 'canceled':
      return { state: TaskState.TASK_STATE_CANCELED, text: null, meta }
    case 'rejected':
      return { state: TaskState.TASK_STATE_REJECTED, text: run.error?.detail ?? rejectedDetail(run), meta }
    case 'failed':
      return { state: TaskState.TASK_STATE_FAILED, text: run.error?.detail ?? 'The run failed.', meta }
    case 'waiting':
      break
  }
  const phase = waitingPhase(run)
  if (!phase) return { state: TaskState.TASK_STATE_WORKING, text: null, meta }
  const call = context.call
  const wait = call ? phase.toolWaits?.find((w) => w.callId === call.id) : undefined
  Object.assign(meta, {
    phaseRunId: phase.id, phaseName: phase.phaseName, operators: phase.operatorPool.map(normalizeHandle),
    approvals: phase.approvals ?? null, callId: call?.id ?? null,
  })
  if (phase.status === 'awaiting_decision') {
    meta.waitingFor = 'decision'
    meta.expireAt = phase.deadlines?.expireAt ?? null
    return { state: TaskState.TASK_STATE_AUTH_REQUIRED, text: `Waiting for ${who(phase)} to decide "${phase.phaseName}"${by(meta.expireAt)}.`, meta }
  }
  meta.expireAt = wait?.expireAt ?? null
  if (phase.status === 'awaiting_tool_approval') {
    meta.waitingFor = 'tool_approval'
    const tool = call?.name ?? 'a tool'
    return { state: TaskState.TASK_STATE_AUTH_REQUIRED, text: `Waiting for ${who(phase)} to approve the call of ${tool} in "${phase.phaseName}"${by(meta.expireAt)}.`, meta }
  }
  meta.waitingFor = 'question'
  const question = String(call?.input.question ?? '')
  if (mayDecide(context.starter, { operatorPool: phase.operatorPool, escalated: wait?.escalated ?? false })) {
    return { state: TaskState.TASK_STATE_INPUT_REQUIRED, text: question, meta }
  }
  return { state: TaskState.TASK_STATE_AUTH_REQUIRED, text: `Waiting for ${who(phase)} to answer in "${phase.phaseName}"${by(meta.expireAt)}: ${question}`, meta }
}

function rejectedDetail(run: Run): string {
  const phase = run.phases.find((p) => p.decisions.at(-1)?.decision === 'reject')
  const note = phase?.decisions.at(-1)?.note
  return phase ? `Phase "${phase.phaseName}" was rejected${note ? `: ${note}` : '.'}` : 'The run was rejected.'
}

export function statusMessage(run: Run, text: string, meta: TandemStatusMeta, messageId: string): Message {
  return {
    messageId, contextId: run.streamId, taskId: run.id, role: Role.ROLE_AGENT, parts: [text === '' ? textPart('') : textPart(text)],
    metadata: { tandem: meta }, extensions: [], referenceTaskIds: [],
  }
}
const textPart = text

/** The status now; its message is the last recorded one when that is the same status (its id and time). */
export function statusOf(run: Run, context: Pick<TaskContext, 'starter' | 'call' | 'messages' | 'updatedAt'>): TaskStatus {
  const { state, text: words, meta } = stateOf(run, context)
  const fallback = run.finishedAt ?? context.updatedAt ?? run.startedAt ?? run.createdAt
  if (words === null) return { state, timestamp: fallback, message: undefined }
  const last = context.messages.findLast((m) => m.role === 'agent')
  if (last && last.state === TaskState[state] && last.text === words) {
    return { state, timestamp: last.createdAt, message: statusMessage(run, words, meta, last.messageId) }
  }
  return { state, timestamp: fallback, message: statusMessage(run, words, meta, `${run.id}:${state}:${meta.callId ?? meta.phaseRunId ?? ''}`) }
}

/** One artifact per agent output of the run, in phase order. */
export function artifactsOf(run: Run): Artifact[] {
  return run.phases.filter((p) => p.output !== null).map((p) => artifactOf(p, p.output as NonNullable<PhaseRun['output']>))
}

export function artifactOf(phase: Pick<PhaseRun, 'id' | 'phaseName' | 'attempts'>, output: { messageId: string; text: string }, kind: 'output' | 'interim' = 'output'): Artifact {
  return {
    artifactId: output.messageId, name: phase.phaseName, description: '', parts: [text(output.text)], extensions: [],
    metadata: { tandem: { messageId: output.messageId, phaseRunId: phase.id, attempt: phase.attempts, kind } },
  }
}

/** `historyLength`: absent all (at most MAX_HISTORY), 0 none, n the latest n. */
export function toTask(run: Run, context: TaskContext, options: { historyLength?: number | undefined; artifacts?: boolean } = {}): Task {
  const status = statusOf(run, context)
  const history: Message[] = context.messages.map((m) =>
    m.role === 'user'
      ? { messageId: m.messageId, contextId: run.streamId, taskId: run.id, role: Role.ROLE_USER, parts: [text(m.text)], metadata: undefined, extensions: [], referenceTaskIds: [] }
      : statusMessage(run, m.text, m.meta ?? emptyMeta(), m.messageId),
  )
  // The current status message, unless it is the last one recorded.
  if (status.message && !history.some((m) => m.messageId === status.message?.messageId)) history.push(status.message)
  const keep = Math.min(options.historyLength ?? MAX_HISTORY, MAX_HISTORY)
  return {
    id: run.id, contextId: run.streamId, status,
    artifacts: options.artifacts === false ? [] : artifactsOf(run),
    history: keep === 0 ? [] : history.slice(-keep),
    metadata: undefined,
  }
}

const emptyMeta = (): TandemStatusMeta => ({ waitingFor: null, phaseRunId: null, phaseName: null, callId: null, operators: [], approvals: null, expireAt: null })

/** The task context read from the database: the starter, the waiting call and (unless `messages: false`) the history. */
export async function readContext(db: Kysely<Database>, run: Run, principalId: string, options: { messages?: boolean } = {}): Promise<TaskContext> {
  const principal = await db.selectFrom('principals').select(['role', 'handle']).where('id', '=', principalId).executeTakeFirst()
  const starter = principal ?? { role: 'member' as const, handle: '' }
  let call: TaskContext['call'] = null
  const phase = waitingPhase(run)
  if (phase && phase.status !== 'awaiting_decision') {
    const row = await db
      .selectFrom('tool_calls').select(['id', 'name', 'input'])
      // Through the run's calls (tool_calls_run): no index leads with the phase run.
      .where('run_id', '=', run.id)
      .where('phase_run_id', '=', phase.id)
      .where((eb) => (phase.status === 'awaiting_tool_approval' ? eb('status', '=', 'awaiting_approval') : eb.and([eb('name', '=', 'tandem.ask_operator'), eb('status', '=', 'running')])))
      .orderBy('id', 'desc').executeTakeFirst()
    if (row) call = { id: row.id, name: row.name, input: JSON.parse(row.input) as Record<string, unknown> }
  }
  if (options.messages === false) return { starter, call, messages: [], updatedAt: null }
  const rows = await db
    .selectFrom('a2a_task_messages').select(['message_id', 'role', 'text', 'created_at', 'state', 'meta'])
    .where('run_id', '=', run.id)
    .orderBy('id', 'desc').limit(MAX_HISTORY).execute()
  const task = await db.selectFrom('a2a_tasks').select('updated_at').where('run_id', '=', run.id).executeTakeFirst()
  const messages = rows.reverse().map((r): HistoryRow => ({
    messageId: r.message_id, role: r.role, text: r.text, createdAt: r.created_at, state: r.state,
    meta: r.meta === null ? null : (JSON.parse(r.meta) as TandemStatusMeta),
  }))
  return { starter, call, messages, updatedAt: task?.updated_at ?? null }
}
