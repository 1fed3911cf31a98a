// Claims on inbox items: "I am on it", for TANDEM_CLAIM_TTL_S. A signal, not a lock: deciding ignores them.
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'

export async function claimItem(db: Kysely<Database>, claim: { workspaceId: string; runId: string; phaseRunId: string; principalId: string; handle: string; ttlS: number }): Promise<void> {
  const expiresAt = new Date(Date.now() + claim.ttlS * 1000).toISOString()
  // Expired claims go as new ones come: the table holds at most a TTL's worth of them.
  await db.deleteFrom('inbox_claims').where('workspace_id', '=', claim.workspaceId).where('expires_at', '<', new Date().toISOString()).execute()
  await db
    .insertInto('inbox_claims')
    .values({ phase_run_id: claim.phaseRunId, workspace_id: claim.workspaceId, run_id: claim.runId, principal_id: claim.principalId, handle: claim.handle, expires_at: expiresAt })
    .onConflict((oc) => oc.column('phase_run_id').doUpdateSet({ principal_id: claim.principalId, handle: claim.handle, expires_at: expiresAt }))
    .execute()
}

export async function releaseItem(db: Kysely<Database>, phaseRunId: string): Promise<void> {
  await db.deleteFrom('inbox_claims').where('phase_run_id', '=', phaseRunId).execute()
}
