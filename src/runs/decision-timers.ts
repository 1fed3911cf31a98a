// The decision clock (OPERATORS.md "Decision policies"): while a phase awaits a decision, its policy's timers —
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
// and CLOCK_EFFECTS says what each timer does. Tool approvals and questions (AGENTS.md) become two more kinds.
import type { FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { enqueueJob, removeJob } from '../jobs/index.js'
import { now } from '../ids.js'
import { normalizeHandle } from '../principals/handles.js'
import { appendEvent } from '../events/store.js'
import { DEFAULT_PHASE_POLICY, durationMs } from '../cycles/policy.js'
import { decisionItemOf } from '../inbox/items.js'
import { withLockedRun } from './locked.js'
import type { PhaseRun, Run } from './schemas.js'
import type { RunSnapshot } from './transitions.js'
import type { Transition } from './machine.js'

export const CLOCK_JOB = 'decision.timer'

/** What waits on the clock: a phase's decision today; `tool_approval` and `question` later. */
export type ClockKind = 'decision'
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
  return after
}

async function startDecisionClock(t: Transition, run: Run, phase: PhaseRun): Promise<boolean> {
  const policy = phase.policy ?? DEFAULT_PHASE_POLICY
  const since = now()
  const at = (after: string | null) => (after === null ? null : new Date(Date.parse(since) + durationMs(after)).toISOString())
  phase.deadlines = { since, attempt: attemptOf(phase), remindAt: at(policy.remindAfter), escalateAt: at(policy.escalateAfter), expireAt: at(policy.expireAfter) }
  // A new wait starts a new round: approvals from before a revise do not count, nor does an earlier escalation.
  phase.approvals = { have: 0, need: policy.quorum }
  phase.escalated = false
  const noOne = await poolMissing(t, phase)
  if (noOne) phase.escalated = true
  for (const timer of TIMERS) {
    const due = phase.deadlines[DEADLINE_OF[timer]]
    if (due === null || (timer === 'escalate' && noOne)) continue
    const job: ClockJob = { clock: 'decision', runId: run.id, phaseRunId: phase.id, callId: null, attempt: attemptOf(phase), timer }
    await enqueueJob(t.db, CLOCK_JOB, job, { jobKey: clockKey(job), runAt: new Date(due) })
  }
  return noOne
}

async function stopDecisionClock(t: Transition, phase: PhaseRun): Promise<void> {
  const deadlines = phase.deadlines
  phase.deadlines = null
  if (!deadlines) return
  for (const timer of TIMERS) {
    // The attempt the timers were set for: a revise has already counted the next one when the clock stops.
    if (deadlines[DEADLINE_OF[timer]] !== null) await removeJob(t.db, clockKey({ clock: 'decision', phaseRunId: phase.id, callId: null, attempt: deadlines.attempt, timer }))
  }
}

/** "No one to decide": a non-empty pool none of whose handles any principal of the workspace has. */
async function poolMissing(t: Transition, phase: PhaseRun): Promise<boolean> {
  const handles = [...new Set(phase.operatorPool.map(normalizeHandle))]
  if (handles.length === 0) return false
  const found = await t.db.selectFrom('principals').select('handle').where('workspace_id', '=', t.workspaceId).where('handle', 'in', handles).limit(1).executeTakeFirst()
  return found === undefined
}

/** `decision.escalated` (data: the inbox item, and why: `timer` or `no-pool`), after the run's own event. */
export const escalatedEvent = (phaseRunId: string, reason: 'timer' | 'no-pool'): AfterPersist => async (t, run) => {
  const phase = run.phases.find((p) => p.id === phaseRunId)
  if (!phase) return
  await appendEvent(t.db, { workspaceId: t.workspaceId, streamId: run.streamId, type: 'decision.escalated', data: { ...(await decisionItemOf(t.db, run, phase)), reason }, traceparent: t.traceparent })
}

export interface ClockEffects {
  remind(t: Transition, run: Run, phase: PhaseRun): Promise<void>
  escalate(t: Transition, run: Run, phase: PhaseRun): Promise<void>
  expire(t: Transition, run: Run, phase: PhaseRun): Promise<void>
}

/**
 * The effect of a timer's job, at most once per key: under the run's lock, only while the phase still waits in the
 * job's attempt. `effects` are the state machine's moves (machine.ts decisionClockEffects).
 */
export async function runClockTimer(app: FastifyInstance, job: ClockJob, effects: Record<ClockKind, ClockEffects>): Promise<void> {
  await app.database.db.transaction().execute((trx) =>
    withLockedRun(trx, app.config.runs, job.runId, null, async (t, run) => {
      const phase = run.phases.find((p) => p.id === job.phaseRunId)
      if (!phase || phase.status !== 'awaiting_decision' || !phase.deadlines || phase.deadlines.attempt !== job.attempt) return
      if (!(await claimEffect(trx, clockKey(job), run.id))) return
      await effects[job.clock][job.timer](t, run, phase)
    }),
  )
}

/** Records that the timer with this key took effect; false when it already had. */
async function claimEffect(db: Kysely<Database>, key: string, runId: string): Promise<boolean> {
  const row = await db.insertInto('clock_effects').values({ key, run_id: runId, created_at: now() }).onConflict((oc) => oc.column('key').doNothing()).returning('key').executeTakeFirst()
  return row !== undefined
}

/** The reminder: one `decision.reminder` event whose data is the inbox item; the run does not change. */
export async function remindEffect(t: Transition, run: Run, phase: PhaseRun): Promise<void> {
  await appendEvent(t.db, { workspaceId: t.workspaceId, streamId: run.streamId, type: 'decision.reminder', data: await decisionItemOf(t.db, run, phase), traceparent: t.traceparent })
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
    const rows = await db.selectFrom('runs').select(['id', 'document']).where('status', '=', 'waiting').where('id', '>', afterId).orderBy('id').limit(200).execute()
    for (const row of rows) {
      const run = JSON.parse(row.document) as Run
      const jobs: ClockJob[] = []
      for (const phase of run.phases) {
        if (phase.status !== 'awaiting_decision' || !phase.deadlines) continue
        for (const timer of TIMERS) {
          if (phase.deadlines[DEADLINE_OF[timer]] === null || (timer === 'escalate' && phase.escalated)) continue
          jobs.push({ clock: 'decision', runId: run.id, phaseRunId: phase.id, callId: null, attempt: phase.deadlines.attempt, timer })
        }
      }
      if (jobs.length === 0) continue
      const done = new Set((await db.selectFrom('clock_effects').select('key').where('run_id', '=', run.id).execute()).map((r) => r.key))
      const pending = jobs.filter((job) => !done.has(clockKey(job)))
      if (pending.length === 0) continue
      await db.transaction().execute(async (trx) => {
        for (const job of pending) {
          const phase = run.phases.find((p) => p.id === job.phaseRunId)!
          await enqueueJob(trx, CLOCK_JOB, job, { jobKey: clockKey(job), runAt: new Date(phase.deadlines![DEADLINE_OF[job.timer]]!) })
        }
      })
      resumed += pending.length
    }
    if (rows.length < 200) return resumed
    afterId = rows[rows.length - 1]!.id
  }
}
