// The pool rule of docs/runs-and-events.md, the one check of who may decide a phase: deciding (service.ts), the cancel rule, and
// the inbox (src/inbox/items.ts) all ask this function.
import { normalizeHandle } from '../principals/handles.js'
import type { Principal } from '../principals/store.js'
import type { PhaseRun, ToolWait } from '../runs/schemas.js'

/**
 * A principal whose handle is in the phase's operatorPool (`@Maria` = `maria`); with an empty pool, any admin or
 * member; once the phase is escalated (its escalateAfter ran out, or no one of its pool exists), any admin too.
 * Never an agent key.
 */
export function mayDecide(caller: Pick<Principal, 'role' | 'handle'>, phase: Pick<PhaseRun, 'operatorPool' | 'escalated'>): boolean {
  if (caller.role === 'agent') return false
  if (phase.escalated === true && caller.role === 'admin') return true
  const pool = phase.operatorPool.map(normalizeHandle)
  return pool.length === 0 ? caller.role === 'admin' || caller.role === 'member' : pool.includes(normalizeHandle(caller.handle))
}

/** The distinct principals who approved the phase since it last began waiting (after its last revise). */
export function approversOf(phase: Pick<PhaseRun, 'decisions'>): Set<string> {
  const lastRevise = phase.decisions.findLastIndex((d) => d.decision === 'revise')
  return new Set(phase.decisions.slice(lastRevise + 1).filter((d) => d.decision === 'approve').map((d) => d.principalId))
}

/** The wait of a call on its phase (its clock's deadlines, whether it escalated), while it has one. */
export const waitOf = (phase: PhaseRun, callId: string): ToolWait | undefined => phase.toolWaits?.find((w) => w.callId === callId)

/**
 * The pool rule for one waiting call: the phase's pool; once the call's wait escalated (its escalateAfter ran out,
 * or no one of the pool exists), any admin too.
 */
export const mayAct = (caller: Pick<Principal, 'role' | 'handle'>, phase: PhaseRun, callId: string) =>
  mayDecide(caller, { operatorPool: phase.operatorPool, escalated: waitOf(phase, callId)?.escalated ?? false })
