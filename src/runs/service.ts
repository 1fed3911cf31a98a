// The run engine's service layer: what the routes call, each function inside the caller's transaction (the
// route's reply.withTransaction, which also stores an idempotent answer in it). A route validates, calls one of
// these, and answers; the state machine (machine.ts) makes the moves.
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import type { RunsConfig } from '../config.js'
import { AppError, notFound } from '../http/problem.js'
import { normalizeHandle } from '../principals/handles.js'
import { requireStream } from '../streams/store.js'
import { findStreamCycle } from '../cycles/store.js'
import { cancelRun, createRun, decide, type Decider, type Transition } from './machine/machine.js'
import { findTriggeredCycles, updateRun } from './store.js'
import { recordRunEvent } from './events.js'
import { withLockedRun } from './machine/locked.js'
import type { Run } from './schemas.js'
import { mayDecide } from '../waits/who.js'
import type { Principal } from '../principals/store.js'
import type { Via } from '../http/via.js'
import type { SavedCycle } from '../cycles/schemas.js'
import { MAX_INPUT_BYTES, MAX_RUNS_PER_TRIGGER } from './limits.js'


/** A run's `input`, checked against its bound: a 400 naming /input past MAX_INPUT_BYTES of JSON. */
export function checkRunInput(input: Record<string, unknown>): Record<string, unknown> {
  const bytes = Buffer.byteLength(JSON.stringify(input))
  if (bytes > MAX_INPUT_BYTES) {
    throw new AppError('validation-error', 'The body has 1 problem; see errors.', [
      { pointer: '/input', detail: `must be at most ${MAX_INPUT_BYTES} bytes as JSON (64 KiB); this one is ${bytes}` },
    ])
  }
  return input
}

export interface RunDeps {
  settings: RunsConfig
}

/** Who acts, in which workspace, and the trace of the request. */
export interface Actor {
  workspaceId: string
  principalId: string
  traceparent: string | null
}

const transition = (deps: RunDeps, trx: Kysely<Database>, actor: Actor): Transition => ({ db: trx, workspaceId: actor.workspaceId, settings: deps.settings, traceparent: actor.traceparent })

/** A run of one saved cycle. */
export async function startRun(deps: RunDeps, trx: Kysely<Database>, actor: Actor, input: { streamId: string; cycleId: string; input: Record<string, unknown> }): Promise<Run> {
  const { stream, cycle, firstAgent } = await findStreamCycle(trx, actor.workspaceId, input.streamId, input.cycleId)
  if (!stream) throw notFound('Stream')
  if (!cycle) throw notFound('Cycle')
  return createRun(transition(deps, trx, actor), { cycle, input: input.input, createdBy: actor.principalId, ...(firstAgent ? { firstAgent } : {}) })
}

/**
 * The saved cycles of the stream with this trigger name, chosen in SQL. More than MAX_RUNS_PER_TRIGGER matching
 * cycles is a 409 that names the bound, thrown before anything is written (no partial fan-out).
 */
export async function triggeredCycles(trx: Kysely<Database>, workspaceId: string, streamId: string, triggerName: string): Promise<SavedCycle[]> {
  const cycles = await findTriggeredCycles(trx, workspaceId, streamId, triggerName, MAX_RUNS_PER_TRIGGER + 1)
  if (cycles.length > MAX_RUNS_PER_TRIGGER) {
    throw new AppError(
      'too-many-runs',
      `More than ${MAX_RUNS_PER_TRIGGER} saved cycles of this stream have the trigger name "${triggerName}"; one trigger starts at most ${MAX_RUNS_PER_TRIGGER} runs. Rename or delete some of them. No run was started.`,
    )
  }
  return cycles
}

/** A run of every saved cycle of the stream with this trigger name (at most MAX_RUNS_PER_TRIGGER). */
export async function fireTrigger(
  deps: RunDeps,
  trx: Kysely<Database>,
  actor: Actor,
  input: { streamId: string; triggerName: string; input: Record<string, unknown> },
): Promise<{ runs: Array<{ id: string; status: Run['status'] }> }> {
  const stream = await requireStream(trx, actor.workspaceId, input.streamId)
  const cycles = await triggeredCycles(trx, actor.workspaceId, stream.id, input.triggerName)
  const t = transition(deps, trx, actor)
  const runs = []
  for (const cycle of cycles) {
    const run = await createRun(t, { cycle, input: input.input, createdBy: actor.principalId })
    runs.push({ id: run.id, status: run.status })
  }
  return { runs }
}

/** Who acts on a run's phases: the principal, its role and handle. */
export type Caller = Pick<Principal, 'principalId' | 'role' | 'handle'>

/**
 * Cancels a run of the workspace: its unfinished phases and open tasks end. Allowed to the pool of a phase the run
 * waits on (awaiting a decision), the principal who started it, or an admin; anyone else 403, nothing changed.
 */
export async function cancel(deps: RunDeps, trx: Kysely<Database>, actor: Actor & Caller, runId: string): Promise<Run> {
  const outcome = await withLockedRun(trx, deps.settings, runId, actor.workspaceId, async (t, run) => {
    const allowed =
      actor.role === 'admin' ||
      run.createdBy === actor.principalId ||
      run.phases.some((phase) => (phase.status === 'awaiting_decision' || phase.status === 'awaiting_tool_approval' || phase.status === 'awaiting_input') && mayDecide(actor, phase))
    if (!allowed) throw new AppError('forbidden', 'Only the principal who started this run, the operator pool of a phase it waits on, or an admin may cancel it.')
    if (!(await cancelRun(t, run))) throw new AppError('run-finished', `The run has already finished (${run.status}).`)
    return run
  })
  if (!outcome) throw notFound('Run')
  return outcome
}

/**
 * An operator's decision on a phase awaiting one; who may decide is checked here: the pool (mayDecide), or an admin
 * outside it who says `override: true` (recorded on the decision). `override` from a non-admin is a 403; from an
 * admin who may decide anyway it is an ordinary decision (nothing recorded).
 */
export async function decidePhase(
  deps: RunDeps,
  trx: Kysely<Database>,
  caller: { workspaceId: string; via?: Via } & Caller,
  input: { runId: string; phaseRunId: string; decision: 'approve' | 'revise' | 'reject'; note: string | null; override: boolean },
): Promise<Run> {
  if (input.override && caller.role !== 'admin') throw new AppError('forbidden', 'Only an admin may decide with `override`.')
  const outcome = await withLockedRun(trx, deps.settings, input.runId, caller.workspaceId, async (t, run) => {
    const phase = run.phases.find((p) => p.id === input.phaseRunId)
    if (!phase) throw notFound('Phase')
    const pooled = mayDecide(caller, phase)
    if (!pooled && !input.override) {
      const pool = phase.operatorPool.map((h) => `@${normalizeHandle(h)}`).join(', ')
      const hint = caller.role === 'admin' ? ' As an admin you may decide it anyway with `"override": true` (recorded).' : ''
      throw new AppError('forbidden', `Only ${pool} may decide phase "${phase.phaseName}".${hint}`)
    }
    const decider: Decider = { principalId: caller.principalId, handle: caller.handle, ...(pooled ? {} : { override: true as const }), ...(caller.via ? { via: caller.via } : {}) }
    const result = await decide(t, run, phase, input.decision, input.note, decider)
    if ('refused' in result) {
      if (result.refused === 'not-awaiting-decision') throw new AppError('not-awaiting-decision', result.detail)
      if (result.refused === 'too-many-attempts') throw new AppError('too-many-attempts', result.detail)
      if (result.refused === 'already-approved') throw new AppError('already-approved', result.detail)
      const pointer = result.refused === 'note-required' ? '/note' : '/decision'
      throw new AppError('unprocessable', result.detail, [{ pointer, detail: result.refused === 'note-required' ? 'is required to revise' : 'revise is not possible on people\'s work' }])
    }
    return run
  })
  if (!outcome) throw notFound('Run')
  return outcome
}

/**
 * A new run retrying a failed or canceled one: same stream, cycle, trigger name, input and depth, the phases and
 * policy the retried run had, started by hand by the caller. The retried run's `retriedBy` is set in the same
 * transaction (a run.updated), under its lock, so a run is retried once: again is a 409 `already-retried`.
 */
export async function retryRun(deps: RunDeps, trx: Kysely<Database>, actor: Actor, runId: string): Promise<Run> {
  const outcome = await withLockedRun(trx, deps.settings, runId, actor.workspaceId, async (t, old) => {
    if (old.retriedBy) {
      throw new AppError('already-retried', `The run was already retried by run ${old.retriedBy}.`, undefined, { location: `/api/runs/${old.retriedBy}` }, { retriedBy: old.retriedBy })
    }
    if (old.status !== 'failed' && old.status !== 'canceled') {
      throw new AppError('run-not-retryable', `Only a failed or canceled run can be retried; this one is ${old.status}.`)
    }
    const cycle = { id: old.cycleId, streamId: old.streamId, triggerName: old.triggerName, phasesTemplate: [] }
    const run = await createRun(transition(deps, trx, actor), { cycle, input: old.input as Record<string, unknown>, createdBy: actor.principalId, depth: old.depth }, old)
    old.retriedBy = run.id
    await updateRun(trx, old)
    await recordRunEvent(trx, t.workspaceId, old, 'run.updated', t.traceparent)
    return run
  })
  if (!outcome) throw notFound('Run')
  return outcome
}
