// The run state machine as data: for each event, which run status may move to which, and which phase status
// may move to which. The one function that writes a run (machine.ts persistRun) checks every write against
// these tables and throws on anything else: an illegal move is a bug, never a state.
//
// An event is one step of the engine, from the run as it was read (locked) to the run as it is written, so a
// row lists the net moves of the step: an answer that auto-advances moves its phase running → succeeded and the
// next one pending → running (or → awaiting_decision for people's work, → failed when its agent is gone).
import type { PhaseStatus, RunStatus } from '../schemas.js'

export type RunEvent = 'create' | 'start' | 'answer' | 'fail' | 'decide' | 'cancel' | 'clock' | 'tool_wait' | 'tool_resume'

type Moves<S extends string> = Partial<Record<S, readonly S[]>>

/** Run status moves per event (`new`: the run did not exist). A status may stay as it is only where listed. */
export const RUN_TRANSITIONS: Record<RunEvent, Moves<RunStatus | 'new'>> = {
  // A run begins its first phase in the transaction that creates it.
  create: { new: ['running', 'waiting', 'succeeded', 'failed'] },
  start: { queued: ['running', 'waiting', 'succeeded', 'failed'] },
  answer: { running: ['running', 'waiting', 'succeeded', 'failed'] },
  fail: { running: ['failed'] },
  decide: { waiting: ['running', 'waiting', 'succeeded', 'failed', 'rejected'] },
  cancel: { queued: ['canceled'], running: ['canceled'], waiting: ['canceled'] },
  // A clock's timer that changes the run without a decision: an escalation (it keeps waiting), or a tool
  // approval's or question's expiry with onExpire `fail` (the phase and the run fail).
  clock: { waiting: ['waiting', 'failed'] },
  // A model's tool call waits for an approval or an operator's answer (docs/tools-and-approvals.md); warnings
  // recorded while the phase runs are a tool_wait that moves nothing.
  tool_wait: { running: ['running', 'waiting'] },
  // An approval or answer arrived: the loop goes on, or the phase still waits for another one.
  tool_resume: { waiting: ['running', 'waiting'] },
}

const BEGIN: Moves<PhaseStatus> = { pending: ['running', 'awaiting_decision', 'failed'] }

/** Phase status moves per event (a phase whose status does not change is not a move). */
export const PHASE_TRANSITIONS: Record<RunEvent, Moves<PhaseStatus>> = {
  create: BEGIN,
  start: BEGIN,
  answer: { ...BEGIN, running: ['succeeded', 'awaiting_decision'] },
  fail: { running: ['failed'] },
  // approve → succeeded (and the next phase begins) once the quorum is met, else it stays; revise → running again;
  // reject → failed; the system's `fail` at expiry → failed.
  decide: { ...BEGIN, awaiting_decision: ['succeeded', 'running', 'failed'] },
  // A tool approval's or a question's expiry with onExpire `fail` fails the phase (decision-expired).
  clock: { awaiting_tool_approval: ['failed'], awaiting_input: ['failed'] },
  cancel: { pending: ['canceled'], running: ['canceled'], awaiting_decision: ['canceled'], awaiting_tool_approval: ['canceled'], awaiting_input: ['canceled'] },
  tool_wait: { running: ['awaiting_tool_approval', 'awaiting_input'] },
  tool_resume: { awaiting_tool_approval: ['running', 'awaiting_input'], awaiting_input: ['running', 'awaiting_tool_approval'] },
}

export class IllegalTransition extends Error {
  constructor(detail: string) {
    super(`illegal run transition: ${detail}`)
    this.name = 'IllegalTransition'
  }
}

/** The statuses a move starts from: the run as it was read. */
export interface RunSnapshot {
  status: RunStatus | 'new'
  phases: PhaseStatus[]
}

export const snapshotOf = (run: { status: RunStatus; phases: Array<{ status: PhaseStatus }> }): RunSnapshot => ({
  status: run.status,
  phases: run.phases.map((p) => p.status),
})

export const NEW_RUN: RunSnapshot = { status: 'new', phases: [] }

/** Throws IllegalTransition unless every change from `before` to `after` is in the tables for `event`. */
export function checkTransition(event: RunEvent, before: RunSnapshot, after: { status: RunStatus; phases: Array<{ status: PhaseStatus; phaseName: string }> }): void {
  const runMoves = RUN_TRANSITIONS[event][before.status] ?? []
  if (!runMoves.includes(after.status)) throw new IllegalTransition(`run ${before.status} → ${after.status} on ${event}`)
  after.phases.forEach((phase, i) => {
    const from = before.status === 'new' ? 'pending' : before.phases[i]
    if (from === undefined) throw new IllegalTransition(`phase ${i} appeared on ${event}`)
    if (from === phase.status) return
    if (!(PHASE_TRANSITIONS[event][from] ?? []).includes(phase.status)) {
      throw new IllegalTransition(`phase "${phase.phaseName}" ${from} → ${phase.status} on ${event}`)
    }
  })
}
