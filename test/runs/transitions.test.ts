// The state machine's tables (src/runs/machine/transitions.ts): every listed move passes the check, and every move not
// listed throws — walked over all statuses and events. The engine's own tests (lifecycle, failures, claims,
// crash) run every real move through the same check in persistRun.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { IllegalTransition, NEW_RUN, PHASE_TRANSITIONS, RUN_TRANSITIONS, checkTransition, type RunEvent } from '../../src/runs/machine/transitions.js'
import { PHASE_STATUSES, RUN_STATUSES, type RunStatus } from '../../src/runs/schemas.js'

const EVENTS = Object.keys(RUN_TRANSITIONS) as RunEvent[]
type PhaseStatus = (typeof PHASE_STATUSES)[number]
const phase = (status: PhaseStatus) => ({ status, phaseName: 'P' })

describe('run transitions', () => {
  it('allows exactly the run moves of the table', () => {
    for (const event of EVENTS) {
      for (const from of [...RUN_STATUSES, 'new' as const]) {
        for (const to of RUN_STATUSES) {
          const listed = (RUN_TRANSITIONS[event][from] ?? []).includes(to)
          const before = from === 'new' ? NEW_RUN : { status: from, phases: [] }
          const check = () => checkTransition(event, before, { status: to as RunStatus, phases: [] })
          if (listed) assert.doesNotThrow(check, `${event}: ${from} → ${to}`)
          else assert.throws(check, IllegalTransition, `${event}: ${from} → ${to} should be illegal`)
        }
      }
    }
  })

  it('allows exactly the phase moves of the table, with the run on a legal move', () => {
    for (const event of EVENTS) {
      const runMove = Object.entries(RUN_TRANSITIONS[event]).find(([from]) => from !== 'new')
      if (!runMove) continue
      const [runFrom, runTos] = runMove as [RunStatus, RunStatus[]]
      for (const from of PHASE_STATUSES) {
        for (const to of PHASE_STATUSES) {
          if (from === to) continue
          const listed = (PHASE_TRANSITIONS[event][from] ?? []).includes(to)
          const check = () => checkTransition(event, { status: runFrom, phases: [from] }, { status: runTos[0]!, phases: [phase(to)] })
          if (listed) assert.doesNotThrow(check, `${event}: phase ${from} → ${to}`)
          else assert.throws(check, IllegalTransition, `${event}: phase ${from} → ${to} should be illegal`)
        }
      }
    }
  })

  it('a finished run never moves', () => {
    for (const event of EVENTS) for (const from of ['succeeded', 'failed', 'rejected', 'canceled'] as const) assert.equal(RUN_TRANSITIONS[event][from], undefined)
  })
})
