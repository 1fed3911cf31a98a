// "No one to decide" (docs/operators.md): a saved cycle whose operatorPool names a handle no principal of the
// workspace has is still saved, with a warning per phase and handle, so a typo (`@marai`) shows at once
// instead of when a run stalls on it.
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { HANDLE_MAX, normalizeHandle } from '../principals/handles.js'
import type { Phase, Warning } from './schemas.js'
import { resolvePhasePolicy, type CyclePolicy } from './policy.js'

export async function poolWarnings(db: Kysely<Database>, workspaceId: string, phases: Array<Pick<Phase, 'id' | 'phaseName' | 'operatorPool'>>): Promise<Warning[]> {
  const named = [...new Set(phases.flatMap((phase) => phase.operatorPool.map(normalizeHandle)))]
  if (named.length === 0) return []
  const rows = await db.selectFrom('principals').select('handle').where('workspace_id', '=', workspaceId).where('handle', 'in', named).execute()
  const known = new Set(rows.map((row) => row.handle))
  const warnings: Warning[] = []
  for (const phase of phases) {
    const pool = [...new Set(phase.operatorPool.map(normalizeHandle))]
    const unknown = pool.filter((handle) => !known.has(handle))
    const consequence = unknown.length === pool.length ? 'no one can decide this phase yet' : 'only the rest of the pool can decide it'
    for (const handle of unknown) {
      warnings.push({ code: 'unknown-operator', detail: `No one in this workspace has the handle @${handle.slice(0, HANDLE_MAX)} (phase "${phase.phaseName.slice(0, 60)}"): ${consequence}.`, phaseId: phase.id })
    }
  }
  return warnings
}

/**
 * A quorum the pool cannot reach: a phase whose operatorPool names fewer distinct handles than its policy's
 * quorum. Saved all the same (an admin may still decide with `override`, or after escalation), with a warning.
 */
export function quorumWarnings(phases: Array<Pick<Phase, 'id' | 'phaseName' | 'operatorPool'>>, policy: CyclePolicy | undefined): Warning[] {
  if (!policy) return []
  const warnings: Warning[] = []
  for (const phase of phases) {
    const pool = new Set(phase.operatorPool.map(normalizeHandle))
    const { quorum } = resolvePhasePolicy(policy, phase.id)
    if (pool.size > 0 && pool.size < quorum) {
      warnings.push({ code: 'quorum-above-pool', detail: `Phase "${phase.phaseName.slice(0, 60)}" needs ${quorum} approvals by different people, but its operatorPool names ${pool.size}: only admins (with override, or once it is escalated) can complete it.`, phaseId: phase.id })
    }
  }
  return warnings
}
