// The pool rule of RUNS.md, the one check of who may decide a phase: deciding (service.ts), the cancel rule, and
// the inbox (src/inbox/items.ts) all ask this function.
import { normalizeHandle } from '../principals/handles.js'
import type { Principal } from '../principals/store.js'
import type { PhaseRun } from './schemas.js'

/** A principal whose handle is in the phase's operatorPool (`@Maria` = `maria`); with an empty pool, any admin or member. Never an agent key. */
export function mayDecide(caller: Pick<Principal, 'role' | 'handle'>, phase: Pick<PhaseRun, 'operatorPool'>): boolean {
  if (caller.role === 'agent') return false
  const pool = phase.operatorPool.map(normalizeHandle)
  return pool.length === 0 ? caller.role === 'admin' || caller.role === 'member' : pool.includes(normalizeHandle(caller.handle))
}
