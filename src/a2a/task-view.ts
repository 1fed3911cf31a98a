// A run as an A2A Task (docs/a2a.md "State mapping"): the run's status and its waiting phase give the TaskState
// and the status message (who must act on what, by when); each phase's output is an artifact; the caller's
// messages and the current status message are the history. Read-only: every instance computes the same task
// from the database, so any of them answers any task.
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
  /** The caller's messages on the task (ROLE_USER), oldest first. */
  userMessages: Array<{ messageId: string; text: string; createdAt: string }>
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

export function statusOf(run: Run, context: Pick<TaskContext, 'starter' | 'call'>, at: string): TaskStatus {
  const { state, text: words, meta } = stateOf(run, context)
  return { state, timestamp: at, message: words === null ? undefined : statusMessage(run, words, meta, `${run.id}:${state}:${meta.callId ?? meta.phaseRunId ?? ''}`) }
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
  const at = run.finishedAt ?? run.startedAt ?? run.createdAt
  const status = statusOf(run, context, at)
  const history: Message[] = context.userMessages.map((m) => ({
    messageId: m.messageId, contextId: run.streamId, taskId: run.id, role: Role.ROLE_USER, parts: [text(m.text)], metadata: undefined, extensions: [], referenceTaskIds: [],
  }))
  if (status.message) history.push(status.message)
  const keep = Math.min(options.historyLength ?? MAX_HISTORY, MAX_HISTORY)
  return {
    id: run.id, contextId: run.streamId, status,
    artifacts: options.artifacts === false ? [] : artifactsOf(run),
    history: keep === 0 ? [] : history.slice(-keep),
    metadata: undefined,
  }
}

/** The task context read from the database: the starter, the waiting call and the caller's messages. */
export async function readContext(db: Kysely<Database>, run: Run, principalId: string): Promise<TaskContext> {
  const principal = await db.selectFrom('principals').select(['role', 'handle']).where('id', '=', principalId).executeTakeFirst()
  const starter = principal ?? { role: 'member' as const, handle: '' }
  let call: TaskContext['call'] = null
  const phase = waitingPhase(run)
  if (phase && phase.status !== 'awaiting_decision') {
    const row = await db
      .selectFrom('tool_calls').select(['id', 'name', 'input'])
      .where('phase_run_id', '=', phase.id)
      .where((eb) => (phase.status === 'awaiting_tool_approval' ? eb('status', '=', 'awaiting_approval') : eb.and([eb('name', '=', 'tandem.ask_operator'), eb('status', '=', 'running')])))
      .orderBy('id', 'desc').executeTakeFirst()
    if (row) call = { id: row.id, name: row.name, input: JSON.parse(row.input) as Record<string, unknown> }
  }
  const rows = await db
    .selectFrom('a2a_task_messages').select(['message_id', 'text', 'created_at'])
    .where('run_id', '=', run.id).where('role', '=', 'user')
    .orderBy('id', 'desc').limit(MAX_HISTORY).execute()
  return { starter, call, userMessages: rows.reverse().map((r) => ({ messageId: r.message_id, text: r.text, createdAt: r.created_at })) }
}
