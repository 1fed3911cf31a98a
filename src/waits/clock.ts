// The decision clock (docs/operators.md "Decision policies"): while a phase awaits a decision, its policy's timers —
// remind, escalate, expire — are durable jobs, keyed per phase attempt:
//
//   <clock>:<phaseRunId>:<attempt>:<timer>        e.g. decision:8f…:2:expire
//
// They are created by persistRun (machine.ts) in the transaction that moves a phase into `awaiting_decision`, and
// removed in the transaction that moves it out (a decision, a cancel). A timer's job takes effect under the run's
// lock (withLockedRun), only if the phase still waits in the same attempt, and only once per key: the effect and a
// `clock_effects` row with the job's key commit together, so a job that runs again (a crash between the effect's
// commit and the job's removal, a job re-added at start-up or by another instance) finds the row and does nothing.
//
// The clock is generic over what waits: `ClockKind` names it, the key and the payload carry an optional `callId`,
// and the effects (jobs.ts ALL_CLOCK_EFFECTS: machine.ts CLOCK_EFFECTS for the decision, each call wait's kind
// file for its own) say what each timer does. Tool approvals and questions (docs/agents-and-vendors.md) run on the same clock, one
// set of timers per waiting call, keyed
//
//   tool_approval:<phaseRunId>/<callId>:<attempt>:<timer>     question:<phaseRunId>/<callId>:<attempt>:<timer>
//
// armed by persistRun for each call that waits while its phase is awaiting_tool_approval / awaiting_input (the
// phase's `toolWaits`), and removed when the call no longer waits (decided, answered) or the phase moves out.
import type { FastifyInstance } from 'fastify'
import { sql, type Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { enqueueJob, removeJob } from '../jobs/index.js'
import { now } from '../ids.js'
import { normalizeHandle } from '../principals/handles.js'
import { appendEvent } from '../events/store.js'
import { DEFAULT_PHASE_POLICY, durationMs } from '../cycles/policy.js'
import { decisionItemOf, toolItemOf } from '../inbox/items.js'
import { withLockedRun } from '../runs/machine/locked.js'
import { TOOL_WAIT_KIND, TOOL_WAIT_STATUS, callWaitsWhere } from './kinds.js'
import type { PhaseRun, Run, ToolWait } from '../runs/schemas.js'
import type { RunSnapshot } from '../runs/machine/transitions.js'
import type { Transition } from '../runs/machine/machine.js'

declare module '../jobs/registry.js' {
  interface JobPayloads {
    /** a wait's clock timer (remind, escalate, expire), keyed `<clock>:<phaseRunId>[/<callId>]:<attempt>:<timer>` */
    'decision.timer': ClockJob
  }
}

export const CLOCK_JOB = 'decision.timer'

/** What waits on the clock: a phase's decision, a tool call's approval, an agent's question. */
export type ClockKind = 'decision' | ToolWait['kind']
export const TIMERS = ['remind', 'escalate', 'expire'] as const
export type TimerKind = (typeof TIMERS)[number]

/** The payload of a timer's job. */
export interface ClockJob {
  clock: ClockKind
  runId: string
  phaseRunId: string
  /** The tool call or question a timer of those kinds belongs to; null for a decision. */
  callId: string | null
  /** The phase attempt the timer was set for: a timer of an earlier attempt does nothing. */
  attempt: number
  timer: TimerKind
}

export const clockKey = (job: Pick<ClockJob, 'clock' | 'phaseRunId' | 'callId' | 'attempt' | 'timer'>) =>
  `${job.clock}:${job.phaseRunId}${job.callId === null ? '' : `/${job.callId}`}:${job.attempt}:${job.timer}`

/** The attempt a decision clock counts in: the phase's task attempts (0 for people's work, which waits once). */
const attemptOf = (phase: PhaseRun) => phase.attempts

const DEADLINE_OF: Record<TimerKind, 'remindAt' | 'escalateAt' | 'expireAt'> = { remind: 'remindAt', escalate: 'escalateAt', expire: 'expireAt' }

/** Work persistRun does after the run's own event (the events a clock change appends). */
export type AfterPersist = (t: Transition, run: Run) => Promise<void>

/**
 * Starts and stops decision clocks for the phases that moved into or out of `awaiting_decision` in this step
 * (from `before` to `run`). Mutates the phases (deadlines, approvals, escalation), so it runs before the run is
 * written; returns what to do after the run's event.
 */
export async function syncDecisionClocks(t: Transition, run: Run, before: RunSnapshot): Promise<AfterPersist[]> {
  const after: AfterPersist[] = []
  for (const phase of run.phases) {
    const was = before.status === 'new' ? 'pending' : before.phases[phase.index]
    if (was === phase.status) continue
    if (phase.status === 'awaiting_decision') {
      const escalated = await startDecisionClock(t, run, phase)
      if (escalated) after.push(escalatedEvent(phase.id, 'no-pool'))
    } else if (was === 'awaiting_decision') await stopDecisionClock(t, phase)
  }
  for (const phase of run.phases) await syncToolClocks(t, run, phase, after)
  return after
}

/** The calls of the phase's current attempt that wait for an operator in the way `kind` says, oldest first. */
export async function waitingCallIds(db: Kysely<Database>, run: Run, phase: PhaseRun, kind: ToolWait['kind']): Promise<string[]> {
  // Through the run's calls (tool_calls_run): no index leads with the phase run.
  const query = db.selectFrom('tool_calls').select('id').where('run_id', '=', run.id).where('phase_run_id', '=', phase.id).where('attempt', '=', phase.attempts).where((eb) => callWaitsWhere(eb, kind))
  return (await query.orderBy('id').execute()).map((r) => r.id)
}

/**
 * Starts and stops the clocks of the phase's waiting calls: while the phase is awaiting_tool_approval (or
 * awaiting_input), each call awaiting an approval (a question) has its own timers; a call that stopped waiting, or a
 * phase that moved out of the wait, has its timers removed. Reads the calls only for phases in or leaving a wait.
 */
async function syncToolClocks(t: Transition, run: Run, phase: PhaseRun, after: AfterPersist[]): Promise<void> {
  const kind = TOOL_WAIT_KIND[phase.status] ?? null
  const old = phase.toolWaits ?? []
  if (kind === null && old.length === 0) return
  const waiting = kind === null ? [] : await waitingCallIds(t.db, run, phase, kind)
  const kept = old.filter((w) => w.kind === kind && waiting.includes(w.callId))
  for (const wait of old) if (!kept.includes(wait)) await removeTimers(t.db, wait.kind, phase.id, wait.callId, wait)
  const fresh = waiting.filter((callId) => !kept.some((w) => w.callId === callId))
  const started: ToolWait[] = []
  if (kind !== null && fresh.length > 0) {
    const noOne = await poolMissing(t, phase)
    for (const callId of fresh) {
      const { deadlines, escalated } = await armTimers(t, run, phase, kind, callId, noOne)
      started.push({ callId, kind, ...deadlines, escalated })
      if (escalated) after.push(escalatedEvent(phase.id, 'no-pool', callId))
    }
  }
  const waits = [...kept, ...started]
  if (waits.length > 0) phase.toolWaits = waits
  else delete phase.toolWaits
}

type Deadlines = NonNullable<PhaseRun['deadlines']>

/** The deadlines of a wait that starts now, its timers' jobs (no escalation when no one of the pool exists). */
async function armTimers(t: Transition, run: Run, phase: PhaseRun, clock: ClockKind, callId: string | null, noOne: boolean): Promise<{ deadlines: Deadlines; escalated: boolean }> {
  const policy = phase.policy ?? DEFAULT_PHASE_POLICY
  const since = now()
  const at = (after: string | null) => (after === null ? null : new Date(Date.parse(since) + durationMs(after)).toISOString())
  const deadlines: Deadlines = { since, attempt: attemptOf(phase), remindAt: at(policy.remindAfter), escalateAt: at(policy.escalateAfter), expireAt: at(policy.expireAfter) }
  for (const timer of TIMERS) {
    const due = deadlines[DEADLINE_OF[timer]]
    if (due === null || (timer === 'escalate' && noOne)) continue
    const job: ClockJob = { clock, runId: run.id, phaseRunId: phase.id, callId, attempt: deadlines.attempt, timer }
    await enqueueJob(t.db, CLOCK_JOB, job, { jobKey: clockKey(job), runAt: new Date(due) })
  }
  return { deadlines, escalated: noOne }
}

async function removeTimers(db: Kysely<Database>, clock: ClockKind, phaseRunId: string, callId: string | null, deadlines: Deadlines): Promise<void> {
  for (const timer of TIMERS) {
    if (deadlines[DEADLINE_OF[timer]] !== null) await removeJob(db, clockKey({ clock, phaseRunId, callId, attempt: deadlines.attempt, timer }))
  }
}

async function startDecisionClock(t: Transition, run: Run, phase: PhaseRun): Promise<boolean> {
  const policy = phase.policy ?? DEFAULT_PHASE_POLICY
  // A new wait starts a new round: approvals from before a revise do not count, nor does an earlier escalation.
  phase.approvals = { have: 0, need: policy.quorum }
  const noOne = await poolMissing(t, phase)
  const { deadlines, escalated } = await armTimers(t, run, phase, 'decision', null, noOne)
  phase.deadlines = deadlines
  phase.escalated = escalated
  return noOne
}

async function stopDecisionClock(t: Transition, phase: PhaseRun): Promise<void> {
  const deadlines = phase.deadlines
  phase.deadlines = null
  // The attempt the timers were set for: a revise has already counted the next one when the clock stops.
  if (deadlines) await removeTimers(t.db, 'decision', phase.id, null, deadlines)
}

/** "No one to decide": a non-empty pool none of whose handles any principal of the workspace has. */
async function poolMissing(t: Transition, phase: PhaseRun): Promise<boolean> {
  const handles = [...new Set(phase.operatorPool.map(normalizeHandle))]
  if (handles.length === 0) return false
  const found = await t.db.selectFrom('principals').select('handle').where('workspace_id', '=', t.workspaceId).where('handle', 'in', handles).limit(1).executeTakeFirst()
  return found === undefined
}

/** The inbox item a clock's event carries: the phase's decision, or the waiting call's approval or question. */
async function itemOf(t: Transition, run: Run, phase: PhaseRun, callId: string | null) {
  return callId === null ? decisionItemOf(t.db, run, phase) : toolItemOf(t.db, run, phase, callId)
}

/** `decision.escalated` (data: the inbox item, and why: `timer` or `no-pool`), after the run's own event. */
export const escalatedEvent = (phaseRunId: string, reason: 'timer' | 'no-pool', callId: string | null = null): AfterPersist => async (t, run) => {
  const phase = run.phases.find((p) => p.id === phaseRunId)
  if (!phase) return
  const item = await itemOf(t, run, phase, callId)
  if (item) await appendEvent(t.db, { workspaceId: t.workspaceId, streamId: run.streamId, type: 'decision.escalated', data: { ...item, reason }, traceparent: t.traceparent })
}

/** A timer's effect on the run; `callId` is the waiting call's for the tool_approval and question clocks. */
export interface ClockEffects {
  remind(t: Transition, run: Run, phase: PhaseRun, callId: string | null): Promise<void>
  escalate(t: Transition, run: Run, phase: PhaseRun, callId: string | null): Promise<void>
  expire(t: Transition, run: Run, phase: PhaseRun, callId: string | null): Promise<void>
}

/** The wait of a call on its phase's clock, while the phase waits for it. */
export function toolWaitOf(phase: PhaseRun, callId: string): ToolWait | undefined {
  const wait = phase.toolWaits?.find((w) => w.callId === callId)
  return wait && phase.status === TOOL_WAIT_STATUS[wait.kind] ? wait : undefined
}

/**
 * The effect of a timer's job, at most once per key: under the run's lock, only while the phase still waits in the
 * job's attempt. `effects` are the state machine's moves (machine.ts decisionClockEffects).
 */
export async function runClockTimer(app: FastifyInstance, job: ClockJob, effects: Partial<Record<ClockKind, ClockEffects>>): Promise<void> {
  const effect = effects[job.clock]?.[job.timer]
  if (!effect) throw new Error(`no effect for the ${job.clock} clock's ${job.timer} timer`)
  await app.database.db.transaction().execute((trx) =>
    withLockedRun(trx, app.config.runs, job.runId, null, async (t, run) => {
      const phase = run.phases.find((p) => p.id === job.phaseRunId)
      if (!phase) return
      if (job.clock === 'decision') {
        if (phase.status !== 'awaiting_decision' || !phase.deadlines || phase.deadlines.attempt !== job.attempt) return
      } else {
        const wait = job.callId === null ? undefined : toolWaitOf(phase, job.callId)
        if (!wait || wait.kind !== job.clock || wait.attempt !== job.attempt) return
      }
      if (!(await claimEffect(trx, clockKey(job), run.id))) return
      await effect(t, run, phase, job.callId)
    }),
  )
}

/** Records that the timer with this key took effect; false when it already had. */
async function claimEffect(db: Kysely<Database>, key: string, runId: string): Promise<boolean> {
  const row = await db.insertInto('clock_effects').values({ key, run_id: runId, created_at: now() }).onConflict((oc) => oc.column('key').doNothing()).returning('key').executeTakeFirst()
  return row !== undefined
}

/** The reminder: one `decision.reminder` event whose data is the inbox item; the run does not change. */
export async function remindEffect(t: Transition, run: Run, phase: PhaseRun, callId: string | null = null): Promise<void> {
  const item = await itemOf(t, run, phase, callId)
  if (item) await appendEvent(t.db, { workspaceId: t.workspaceId, streamId: run.streamId, type: 'decision.reminder', data: item, traceparent: t.traceparent })
}

/**
 * The waiting runs after `afterId`, 200 at a time in id order, through the index of waiting runs only
 * (`runs_waiting`, migration 0142: the status is written into the SQL, which that partial index needs): a start-up
 * reads the runs that wait, not every run the database holds.
 */
export function waitingRunsAfter(db: Kysely<Database>, afterId: string) {
  return db.selectFrom('runs').select(['id', 'document']).where('status', '=', sql.lit('waiting')).where('id', '>', afterId).orderBy('id').limit(200)
}

/**
 * Start-up: every phase awaiting a decision has the jobs of its timers not yet taken effect (re-added under the
 * same keys: nothing changes when a job is there). This takes over a job a killed instance held locked
 * (PostgreSQL keeps such a lock for hours); a job that then runs twice takes effect once (clock_effects).
 */
export async function resumeDecisionClocks(db: Kysely<Database>): Promise<number> {
  let resumed = 0
  let afterId = ''
  for (;;) {
    const rows = await waitingRunsAfter(db, afterId).execute()
    for (const row of rows) {
      const run = JSON.parse(row.document) as Run
      const jobs: ClockJob[] = []
      const due = new Map<string, string>()
      const add = (job: ClockJob, deadlines: Deadlines, escalated: boolean | undefined) => {
        for (const timer of TIMERS) {
          const at = deadlines[DEADLINE_OF[timer]]
          if (at === null || (timer === 'escalate' && escalated)) continue
          const timed = { ...job, timer }
          jobs.push(timed)
          due.set(clockKey(timed), at)
        }
      }
      for (const phase of run.phases) {
        if (phase.status === 'awaiting_decision' && phase.deadlines) add({ clock: 'decision', runId: run.id, phaseRunId: phase.id, callId: null, attempt: phase.deadlines.attempt, timer: 'remind' }, phase.deadlines, phase.escalated)
        for (const wait of phase.toolWaits ?? []) {
          if (phase.status === TOOL_WAIT_STATUS[wait.kind]) add({ clock: wait.kind, runId: run.id, phaseRunId: phase.id, callId: wait.callId, attempt: wait.attempt, timer: 'remind' }, wait, wait.escalated)
        }
      }
      if (jobs.length === 0) continue
      const done = new Set((await db.selectFrom('clock_effects').select('key').where('run_id', '=', run.id).execute()).map((r) => r.key))
      const pending = jobs.filter((job) => !done.has(clockKey(job)))
      if (pending.length === 0) continue
      await db.transaction().execute(async (trx) => {
        for (const job of pending) await enqueueJob(trx, CLOCK_JOB, job, { jobKey: clockKey(job), runAt: new Date(due.get(clockKey(job))!) })
      })
      resumed += pending.length
    }
    if (rows.length < 200) return resumed
    afterId = rows[rows.length - 1]!.id
  }
}
