// The run state machine: the one module that changes runs. Every transition runs inside the caller's
// transaction on a run it has locked (store.ts lockRun), mutates the run document, creates the work it implies
// (a task and its delivery job, a message) and ends with persistRun, which writes the run and appends its
// event — so a state change, its work and its event commit together or not at all.
//
// Which moves are allowed is data, in transitions.ts, checked by persistRun.
import type { Via } from '../../http/via.js'
import { createHash } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Database } from '../../db/database.js'
import type { RunsConfig } from '../../config.js'
import { newId, now, secureRandomBytes } from '../../ids.js'
import { NIL_UUID } from '../../http/schemas.js'
import { toProblem, type ProblemKind } from '../../http/problem.js'
import { childOfStored } from '../../http/trace.js'
import { insertMessage } from '../../chat/store.js'
import { completeStreamingMessage, failStreamingMessage, findTaskMessage } from '../../chat/streaming.js'
import { renderText } from '../../chat/richtext.js'
import type { Content } from '../../chat/schemas.js'
import { findAgent } from '../../agents/store.js'
import type { Agent } from '../../agents/schemas.js'
import { removeJobs, type JobSpec } from '../../jobs/index.js'
import type { SavedCycle } from '../../cycles/schemas.js'
import type { AgentOutput, ProblemCode, Usage } from '../adapters/adapter.js'
import { adapterFor } from '../adapters/index.js'
import { authModeProblem } from '../adapters/auth-mode.js'
import { closeOpenTasks, insertRun, insertTask, updateRun, type FirstTask, type NewTask } from '../store.js'
import { recordRunEvent } from '../events.js'
import type { PhaseRun, Run, RunProblem, RunTrigger } from '../schemas.js'
import { FINISHED_RUN_STATUSES, statusInWords } from '../schemas.js'
import { MAX_ATTEMPTS_PER_PHASE } from '../limits.js'
import { NEW_RUN, checkTransition, snapshotOf, type RunEvent, type RunSnapshot } from './transitions.js'
import { vaultOf, type Vault } from '../../credentials/vault.js'
import { DELIVER_TASK_JOB, TIMEOUT_JOB, deliveryKey, timeoutKey, type DeliveryJob } from './jobs.js'
import { DEFAULT_PHASE_POLICY, resolvePhasePolicy } from '../../cycles/policy.js'
import { escalatedEvent, remindEffect, syncDecisionClocks, type ClockEffects, type ClockKind } from '../../waits/clock.js'
import { approversOf } from '../../waits/who.js'
import { settleEndedCalls } from '../tool-calls/store.js'
import { queueRemoteCancels } from '../../a2a/cancel.js'
import { noteTaskChange } from '../../a2a/history.js'
import { resumeClocks } from '../../a2a/remote-clock.js'
import { openWaits, recordInsights } from '../../insights/rollup.js'

export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex')
export const newToken = () => `tdt_${secureRandomBytes(32).toString('base64url')}`

// The associated data of a sealed task token: bound to its task, and never taken for another kind of secret.
const tokenAad = (taskId: string) => `task token ${taskId}`

/** The plaintext token of a delivery job (made again, or opened, with the keys of `vault`, current or previous). */
export function taskToken(vault: Vault, job: DeliveryJob): string {
  if (typeof job.token === 'string') return job.token
  if ('derivedWith' in job.token) return vault.taskToken(job.taskId, job.token.derivedWith)
  return vault.open(job.token, tokenAad(job.taskId))
}

export function runProblem(kind: ProblemKind | ProblemCode, detail: string): RunProblem {
  const { type, title, status } = toProblem(kind as ProblemKind, detail)
  return { type, title, status, detail }
}

export const isFinished = (run: Run) => FINISHED_RUN_STATUSES.includes(run.status)

export function contentOf(text: string): Content {
  const lines = text.split(/\r?\n/)
  return { blocks: [{ type: 'rich_text', elements: lines.map((line) => ({ type: 'paragraph' as const, children: line === '' ? [] : [{ type: 'text' as const, text: line }] })) }] }
}

export interface Transition {
  db: Kysely<Database>
  workspaceId: string
  settings: RunsConfig
  /**
   * The trace the work of this transition belongs to: for a new run, the span of the request that starts it
   * (stored on the run); afterwards always the run's (store.ts lockRun), whoever acts — a run is one trace, and
   * an operator's decision or an agent's answer continues it rather than starting its own. Tasks, the webhook
   * deliveries of its events and its messages' events get spans of it. Null for runs from before 0036.
   */
  traceparent: string | null
  /**
   * Whether the task tool route was ever called in the run, as read under its lock (store.ts lockRun); a
   * transition that did not lock the run leaves it unset, and settleEndedCalls then looks for such calls itself.
   */
  routeCalls?: boolean
}

/**
 * The one place a run is written: the move is checked against the transition tables (transitions.ts; an
 * illegal one throws), then the row and its event, in the caller's transaction.
 */
export async function persistRun(t: Transition, run: Run, event: RunEvent, before: RunSnapshot, firstTasks: FirstTask[] = []): Promise<void> {
  checkTransition(event, before, run)
  const waiting = openWaits(run)
  // Phases that began or stopped awaiting a decision start or stop their decision clock (its timers' jobs).
  const afterwards = await syncDecisionClocks(t, run, before)
  // Phases that stopped being at work settle their task tool route calls left in flight (tool-calls/store.ts settleEndedCalls).
  await settleEndedCalls(t, run, before)
  // A new run's row is written once, whole, with what refers to it (its first task, deferred by createRun).
  if (event === 'create') await insertRun(t.db, t.workspaceId, run, t.traceparent, firstTasks)
  else await updateRun(t.db, run)
  // A run started over A2A: its task's last change and status history (src/a2a/history.ts).
  await noteTaskChange(t.db, run)
  // A phase done by a remote A2A agent that stops waiting on operators: its task's clock runs again (src/a2a/remote-clock.ts).
  if (event !== 'create') await resumeClocks(t.db, t.settings, run, before)
  await recordRunEvent(t.db, t.workspaceId, run, event === 'create' ? 'run.created' : 'run.updated', t.traceparent)
  // The scorecards' rollup rows of the phases this moved (src/insights/rollup.ts). Two runs of one agent on one
  // stream share the agent's rollup rows and the stream's head row: on PostgreSQL a transaction writes its events,
  // and so takes the head, by its last statement (events/store.ts), so the head is always locked last and such
  // runs wait for each other instead of deadlocking.
  await recordInsights(t, run, before, waiting, event === 'decide')
  for (const work of afterwards) await work(t, run)
}

async function postMessage(t: Transition, run: Run, authorId: string, authorType: 'principal' | 'agent', content: Content) {
  return insertMessage(t.db, { workspaceId: t.workspaceId, streamId: run.streamId, authorId, authorType, content, traceparent: t.traceparent, origin: { runId: run.id, cycleId: run.cycleId, depth: run.depth } })
}

/** A new run of a saved cycle: its phases copied, its first phase begun (a cycle without phases succeeds at once). */
export async function createRun(
  t: Transition,
  input: {
    cycle: Pick<SavedCycle, 'id' | 'streamId' | 'triggerName' | 'phasesTemplate' | 'policy'>
    input: Record<string, unknown>
    createdBy: string
    trigger?: RunTrigger
    depth?: number
    /** The agent of the cycle's first phase, when the caller read it in this transaction (not read again). */
    firstAgent?: Agent
  },
  retried?: Run,
): Promise<Run> {
  // A retry copies the phases and policy the retried run had (its cycle may have changed since).
  const template = retried
    ? retried.phases.map((p) => ({ phase: { id: p.phaseId, phaseName: p.phaseName, agentId: p.agentId, goal: p.goal, instructions: p.instructions, autoAdvance: p.autoAdvance, operatorPool: p.operatorPool }, policy: p.policy ?? resolvePhasePolicy(null, p.phaseId) }))
    : input.cycle.phasesTemplate.map((phase) => ({ phase, policy: resolvePhasePolicy(input.cycle.policy, phase.id) }))
  const run: Run = {
    id: newId(),
    streamId: input.cycle.streamId,
    cycleId: input.cycle.id,
    triggerName: input.cycle.triggerName,
    status: 'queued',
    input: input.input,
    createdBy: input.createdBy,
    trigger: input.trigger ?? { kind: 'manual', id: null },
    depth: input.depth ?? 0,
    createdAt: now(),
    startedAt: null,
    finishedAt: null,
    error: null,
    phases: template.map(({ phase, policy }, index) => {
      return {
      id: newId(),
      phaseId: phase.id,
      index,
      phaseName: phase.phaseName,
      agentId: phase.agentId,
      goal: phase.goal,
      instructions: phase.instructions,
      autoAdvance: phase.autoAdvance,
      operatorPool: phase.operatorPool,
      status: 'pending',
      attempts: 0,
      output: null,
      error: null,
      decisions: [],
      startedAt: null,
      finishedAt: null,
      policy,
      approvals: { have: 0, need: policy.quorum },
      deadlines: null,
      escalated: false,
      usage: null,
      costUsd: null,
    }
    }),
    usage: null,
    costUsd: null,
    retryOf: retried?.id ?? null,
    retriedBy: null,
  }
  // The first phase begins in the same transaction (no start job), and run.created shows the run begun. Its
  // task is written with the run's row (which it refers to: after it, or in its statement on PostgreSQL), so that the
  // row is inserted once, as it ends.
  run.startedAt = run.createdAt
  run.status = 'running'
  const firstTasks: FirstTask[] = []
  await beginPhase(t, run, 0, null, firstTasks, retried ? undefined : input.firstAgent)
  await persistRun(t, run, 'create', NEW_RUN, firstTasks)
  return run
}

/** The start job of a run still `queued` (created before runs began in their request; kept for those). */
export async function beginRun(t: Transition, run: Run): Promise<void> {
  if (run.status !== 'queued') return
  const before = snapshotOf(run)
  run.startedAt = now()
  run.status = 'running'
  await beginPhase(t, run, 0, null)
  await persistRun(t, run, 'start', before)
}

function finishRun(run: Run, status: Run['status'], error: RunProblem | null = null): void {
  run.status = status
  run.error = error
  run.finishedAt = now()
}

/**
 * Starts phase `index` (or finishes the run after the last one); `feedback` is a revise note. Does not persist.
 * Given `deferred`, the task and its jobs are left there for persistRun (the run's row does not exist yet). `known`:
 * the phase's agent when the caller read it in this transaction.
 */
async function beginPhase(t: Transition, run: Run, index: number, feedback: string | null, deferred?: FirstTask[], known?: Agent): Promise<void> {
  const phase = run.phases[index]
  if (!phase) return finishRun(run, 'succeeded')
  phase.status = 'running'
  phase.startedAt ??= now()
  run.status = 'running'
  if (phase.agentId === NIL_UUID) {
    // People's work: no task; an operator approves it (optionally with a note that becomes the output).
    phase.status = 'awaiting_decision'
    run.status = 'waiting'
    return
  }
  const agent = known?.id === phase.agentId ? known : await findAgent(t.db, t.workspaceId, phase.agentId)
  if (!agent) return failPhase(t, run, phase, runProblem('agent-unavailable', `The agent ${phase.agentId} of phase "${phase.phaseName}" no longer exists.`))
  const adapter = adapterFor(agent.providerType)
  if (!adapter) return failPhase(t, run, phase, runProblem('agent-unavailable', `Agents of providerType ${agent.providerType} cannot be called by this server.`))
  const misconfigured = authModeProblem({ providerType: agent.providerType, authMode: agent.authMode, hasCredential: agent.credentialId !== null })
  if (misconfigured) return failPhase(t, run, phase, runProblem('agent-misconfigured', misconfigured))
  phase.attempts += 1
  const at = now()
  const taskId = newId()
  const delivery = adapter.delivery ?? 'push'
  const vault = vaultOf(t.db)
  const task: NewTask = {
    id: taskId,
    workspace_id: t.workspaceId,
    run_id: run.id,
    phase_run_id: phase.id,
    agent_id: agent.id,
    attempt: phase.attempts,
    feedback,
    delivery,
    state: 'open',
    // A claim task gets its token when claimed.
    token_hash: delivery === 'push' ? hashToken(vault.taskToken(taskId)) : null,
    lease_until: null,
    created_at: at,
    closed_at: null,
    traceparent: childOfStored(t.traceparent),
  }
  // A push task's delivery job; its time-out is armed by the delivery if the task stays open (tasks/delivery.ts
  // timeoutJob). A claim task waits on its time-out (keyed by the task, removed when it settles) from the start.
  const jobs: JobSpec[] = []
  if (delivery === 'push') {
    const job: DeliveryJob = { taskId, token: { derivedWith: vault.keyId }, dispatch: 1 }
    // Handed to the worker at the commit (SQLite): deliverTask looks first whether the task is still open.
    jobs.push({ name: DELIVER_TASK_JOB, payload: job, options: { jobKey: deliveryKey(taskId), newKey: true, startAtCommit: true } })
  } else {
    jobs.push({ name: TIMEOUT_JOB, payload: { taskId }, options: { jobKey: timeoutKey(taskId), newKey: true, runAt: new Date(Date.parse(at) + t.settings.taskTimeoutS * 1000) } })
  }
  if (deferred) deferred.push({ task, jobs })
  else await insertTask(t.db, task, jobs)
}

/** Closes the run's open tasks (a cancel, a failure) and removes their time-out jobs. */
async function closeTasks(t: Transition, runId: string, at: string): Promise<void> {
  const canceled = await closeOpenTasks(t.db, runId, 'canceled', at)
  await removeJobs(t.db, canceled.map(timeoutKey))
  // A task a remote A2A agent still works on is canceled there too (a job after the commit, src/a2a/cancel.ts).
  await queueRemoteCancels(t.db, canceled)
  for (const taskId of canceled) await failStreamingMessage(t.db, taskId, t.traceparent)
}

/** A phase fails, and with it the run (its error is the phase's problem). Does not persist. */
async function failPhase(t: Transition, run: Run, phase: PhaseRun, problem: RunProblem): Promise<void> {
  phase.status = 'failed'
  phase.error = problem
  phase.finishedAt = now()
  finishRun(run, 'failed', problem)
  await closeTasks(t, run.id, now())
}

async function succeedPhase(t: Transition, run: Run, phase: PhaseRun): Promise<void> {
  phase.status = 'succeeded'
  phase.finishedAt = now()
  await beginPhase(t, run, phase.index + 1, null)
}

const addUsage = (a: Usage | null | undefined, b: Usage): Usage => ({ inputTokens: (a?.inputTokens ?? 0) + b.inputTokens, outputTokens: (a?.outputTokens ?? 0) + b.outputTokens })
const roundUsd = (usd: number) => Math.round(usd * 1e9) / 1e9

/** What an attempt's tokens cost under the agent's `config.pricing` ({ inputPerMTok, outputPerMTok } in USD), or null without. */
export function costOf(usage: Usage, config: Record<string, unknown> | undefined): number | null {
  const pricing = config?.pricing as { inputPerMTok?: unknown; outputPerMTok?: unknown } | undefined
  const rate = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null)
  const input = rate(pricing?.inputPerMTok)
  const output = rate(pricing?.outputPerMTok)
  if (input === null && output === null) return null
  const usd = roundUsd((usage.inputTokens * (input ?? 0) + usage.outputTokens * (output ?? 0)) / 1e6)
  return Number.isFinite(usd) && usd >= 0 ? usd : null
}

/** An attempt's usage added to its phase and run (and its cost, when the agent has pricing). */
async function recordUsage(t: Transition, run: Run, phase: PhaseRun, usage: Usage): Promise<void> {
  const agent = await findAgent(t.db, t.workspaceId, phase.agentId)
  const cost = costOf(usage, agent?.config as Record<string, unknown> | undefined)
  phase.usage = addUsage(phase.usage, usage)
  run.usage = addUsage(run.usage, usage)
  if (cost !== null) {
    phase.costUsd = roundUsd((phase.costUsd ?? 0) + cost)
    run.costUsd = roundUsd((run.costUsd ?? 0) + cost)
  }
}

/**
 * The agent's output arrived for the phase's open task (already closed by the caller). `taskId`: the task it
 * answers — when the answer was streamed into a message, that message is completed instead of posting another;
 * `usage`: the tokens the attempt used, when reported.
 */
export async function phaseAnswered(t: Transition, run: Run, phaseRunId: string, output: AgentOutput, answer: { taskId?: string; usage?: Usage | null; streamed?: boolean } = {}): Promise<void> {
  const phase = run.phases.find((p) => p.id === phaseRunId)
  if (!phase || phase.status !== 'running' || isFinished(run)) return
  const before = snapshotOf(run)
  const content = 'content' in output ? output.content : contentOf(output.text)
  // A task's streamed message, completed rather than a second one posted (unless the caller knows there is none).
  const streamed = answer.taskId && answer.streamed !== false ? await findTaskMessage(t.db, answer.taskId) : undefined
  const message = streamed
    ? await completeStreamingMessage(t.db, { messageId: streamed.id, workspaceId: t.workspaceId, content, traceparent: t.traceparent, origin: { runId: run.id, cycleId: run.cycleId, depth: run.depth } })
    : await postMessage(t, run, phase.agentId, 'agent', content)
  phase.output = { messageId: message.id, text: message.text }
  if (answer.usage) await recordUsage(t, run, phase, answer.usage)
  if (phase.autoAdvance) await succeedPhase(t, run, phase)
  else {
    phase.status = 'awaiting_decision'
    run.status = 'waiting'
  }
  await persistRun(t, run, 'answer', before)
}

/** The phase's task failed (agent error, time-out, unreachable…): the phase and the run fail. */
export async function phaseFailed(t: Transition, run: Run, phaseRunId: string, problem: RunProblem): Promise<void> {
  const phase = run.phases.find((p) => p.id === phaseRunId)
  if (!phase || phase.status !== 'running' || isFinished(run)) return
  const before = snapshotOf(run)
  await failPhase(t, run, phase, problem)
  await persistRun(t, run, 'fail', before)
}

export interface Decider {
  principalId: string
  handle: string | null
  /** an admin outside the phase's pool decided it with `override: true` */
  override?: true
  /** the system, deciding the phase's `onExpire` when its expireAfter ran out */
  expired?: true
  /** how a person's decision came (src/http/via.ts); the system's decisions carry none */
  via?: Via
}

/** Who decides when a decision expires (handle `system`). */
export const SYSTEM_DECIDER: Decider = { principalId: 'system', handle: 'system', expired: true }

export type DecisionOutcome = { ok: true } | { refused: 'not-awaiting-decision' | 'note-required' | 'revise-people' | 'too-many-attempts' | 'already-approved'; detail: string }

/**
 * approve / revise / reject on a phase awaiting a decision (and `fail`, the system's at expiry). The caller has
 * checked who may decide. An approve counts toward the phase's quorum (distinct principals since it began waiting);
 * the phase succeeds when the quorum is met, or at once when the system approves at expiry.
 */
export async function decide(t: Transition, run: Run, phase: PhaseRun, decision: 'approve' | 'revise' | 'reject' | 'fail', note: string | null, decider: Decider): Promise<DecisionOutcome> {
  if (phase.status !== 'awaiting_decision' || isFinished(run)) {
    const ended = run.status === 'canceled' || run.status === 'rejected' ? `was ${run.status}` : `has ${run.status}`
    const where = phase.status === 'awaiting_decision' ? `belongs to a run that ${ended}` : statusInWords(phase.status)
    return { refused: 'not-awaiting-decision', detail: `Phase "${phase.phaseName}" ${where}: it takes no decision.` }
  }
  const people = phase.agentId === NIL_UUID
  if (decision === 'revise' && people) return { refused: 'revise-people', detail: 'A phase of people\'s work (no agent) cannot be revised: approve it, with a note as its output, or reject it.' }
  if (decision === 'revise' && note === null) return { refused: 'note-required', detail: '`revise` needs a `note` telling the agent what to change.' }
  if (decision === 'revise' && phase.attempts >= MAX_ATTEMPTS_PER_PHASE) {
    return { refused: 'too-many-attempts', detail: `Phase "${phase.phaseName}" has had ${phase.attempts} attempts, the most a phase may have (${MAX_ATTEMPTS_PER_PHASE}): approve or reject it.` }
  }
  if (decision === 'approve' && !decider.expired && approversOf(phase).has(decider.principalId)) {
    return { refused: 'already-approved', detail: `You have already approved phase "${phase.phaseName}"; it needs approvals from ${phase.approvals?.need ?? 1} different people.` }
  }
  const before = snapshotOf(run)
  phase.decisions.push({ decision, note, principalId: decider.principalId, handle: decider.handle, at: now(), ...(decider.override ? { override: true } : {}), ...(decider.expired ? { expired: true } : {}), ...(decider.via ? { via: decider.via } : {}) })
  if (decision === 'approve') {
    const need = phase.approvals?.need ?? 1
    const approvers = approversOf(phase)
    phase.approvals = { have: approvers.size, need }
    if (approvers.size < need && !decider.expired) {
      // Short of the quorum: the phase keeps waiting (and its timers keep running).
      await persistRun(t, run, 'decide', before)
      return { ok: true }
    }
    // People's work: the output is the latest note among this round's approves.
    const noted = people ? roundOf(phase).findLast((d) => d.decision === 'approve' && d.note !== null) : undefined
    if (noted?.note) {
      const message = await postMessage(t, run, noted.principalId, 'principal', contentOf(noted.note))
      phase.output = { messageId: message.id, text: renderText(message.content) }
    }
    await succeedPhase(t, run, phase)
  } else if (decision === 'revise') {
    if (phase.approvals) phase.approvals = { have: 0, need: phase.approvals.need }
    await beginPhase(t, run, phase.index, note)
  } else if (decision === 'fail') {
    phase.status = 'failed'
    phase.finishedAt = now()
    const after = phase.policy?.expireAfter ?? DEFAULT_PHASE_POLICY.expireAfter
    const problem = runProblem('decision-expired', `No one decided phase "${phase.phaseName}" within ${after}; its policy fails it (onExpire: fail).`)
    phase.error = problem
    finishRun(run, 'failed', problem)
    await closeTasks(t, run.id, now())
  } else {
    phase.status = 'failed'
    phase.finishedAt = now()
    const by = decider.handle ? `@${decider.handle}` : decider.principalId
    const why = decider.expired ? `: no one decided it within ${phase.policy?.expireAfter} (onExpire: reject).` : note ? `: ${note}` : '.'
    const problem = runProblem('phase-rejected', `Phase "${phase.phaseName}" was rejected by ${by}${why}`)
    phase.error = problem
    finishRun(run, 'rejected', problem)
  }
  await persistRun(t, run, 'decide', before)
  return { ok: true }
}

/** This round's decisions: those since the phase last began waiting (after its last revise). */
function roundOf(phase: PhaseRun): PhaseRun['decisions'] {
  const lastRevise = phase.decisions.findLastIndex((d) => d.decision === 'revise')
  return phase.decisions.slice(lastRevise + 1)
}

/** Escalation by the clock: admins may decide the phase as if in its pool, and it joins their inboxes. */
async function escalateDecision(t: Transition, run: Run, phase: PhaseRun): Promise<void> {
  if (phase.escalated) return
  const before = snapshotOf(run)
  phase.escalated = true
  await persistRun(t, run, 'clock', before)
  await escalatedEvent(phase.id, 'timer')(t, run)
}

/** Expiry: the system decides the phase's onExpire (reject by default), recorded with handle `system`. */
async function expireDecision(t: Transition, run: Run, phase: PhaseRun): Promise<void> {
  await decide(t, run, phase, phase.policy?.onExpire ?? DEFAULT_PHASE_POLICY.onExpire, null, SYSTEM_DECIDER)
}

/**
 * A tool approval's or a question's expiry with onExpire `fail` (src/waits/tool-waits.ts): the waiting phase fails with
 * `decision-expired`, and with it the run.
 */
export async function failWaitingPhase(t: Transition, run: Run, phase: PhaseRun, detail: string): Promise<void> {
  const before = snapshotOf(run)
  await failPhase(t, run, phase, runProblem('decision-expired', detail))
  await persistRun(t, run, 'clock', before)
}

/** What each clock's timers do (src/waits/clock.ts runs them, once per key, under the run's lock); each kind of call wait has its own (src/waits/jobs.ts puts them in one table). */
export const CLOCK_EFFECTS: Pick<Record<ClockKind, ClockEffects>, 'decision'> = {
  decision: { remind: remindEffect, escalate: escalateDecision, expire: expireDecision },
}

/** Ends the run and every unfinished phase; open tasks are closed (a late answer is a 409). */
export async function cancelRun(t: Transition, run: Run): Promise<boolean> {
  if (isFinished(run)) return false
  const before = snapshotOf(run)
  const at = now()
  for (const phase of run.phases) {
    if (phase.status === 'pending' || phase.status === 'running' || phase.status === 'awaiting_decision' || phase.status === 'awaiting_tool_approval' || phase.status === 'awaiting_input') {
      phase.status = 'canceled'
      phase.finishedAt = at
    }
  }
  finishRun(run, 'canceled')
  await closeTasks(t, run.id, at)
  await persistRun(t, run, 'cancel', before)
  return true
}
