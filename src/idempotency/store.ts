// Idempotency keys and the responses stored under them, scoped to one principal of one workspace.
// A row is first a claim (status 0, the in-flight marker), then the stored response.
import type { Kysely, Selectable } from 'kysely'
import type { Database } from '../db/database.js'
import type { IdempotencyRequestTable } from './idempotency.table.js'

export type IdempotencyRequest = Selectable<IdempotencyRequestTable>

export interface KeyScope {
  workspaceId: string
  principalId: string
  key: string
}

export interface StoredResponse {
  status: number
  headers: Record<string, string>
  body: string
}

const scoped = (db: Kysely<Database>, scope: KeyScope) =>
  db
    .selectFrom('idempotency_requests')
    .where('workspace_id', '=', scope.workspaceId)
    .where('principal_id', '=', scope.principalId)
    .where('key', '=', scope.key)

/** Inserts the in-flight marker; false when a row for the key already exists. */
export async function claimKey(db: Kysely<Database>, scope: KeyScope, claim: { id: string; requestHash: string; at: string; instanceId: string | null }): Promise<boolean> {
  const result = await db
    .insertInto('idempotency_requests')
    .values({
      workspace_id: scope.workspaceId,
      principal_id: scope.principalId,
      key: scope.key,
      request_hash: claim.requestHash,
      claim_id: claim.id,
      status: 0,
      headers: '{}',
      body: '',
      created_at: claim.at,
      instance_id: claim.instanceId,
    })
    .onConflict((oc) => oc.columns(['workspace_id', 'principal_id', 'key']).doNothing())
    .executeTakeFirst()
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0
}

export async function findKey(db: Kysely<Database>, scope: KeyScope): Promise<IdempotencyRequest | undefined> {
  return scoped(db, scope).selectAll().executeTakeFirst()
}

/** Deletes the row if it is still the given claim's (an abandoned or expired row, or a 5xx's claim). */
export async function releaseKey(db: Kysely<Database>, scope: KeyScope, claimId: string): Promise<void> {
  await db
    .deleteFrom('idempotency_requests')
    .where('workspace_id', '=', scope.workspaceId)
    .where('principal_id', '=', scope.principalId)
    .where('key', '=', scope.key)
    .where('claim_id', '=', claimId)
    .execute()
}

/**
 * Turns the claim into the stored response. False when the claim is no longer held (taken over after it
 * was abandoned): the caller must then not commit what it did.
 */
export async function storeResponse(db: Kysely<Database>, scope: KeyScope, claimId: string, response: StoredResponse): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_requests')
    .set({ status: response.status, headers: JSON.stringify(response.headers), body: response.body })
    .where('workspace_id', '=', scope.workspaceId)
    .where('principal_id', '=', scope.principalId)
    .where('key', '=', scope.key)
    .where('claim_id', '=', claimId)
    .where('status', '=', 0)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

/**
 * Deletes rows created before `before`, `batchSize` at a time (each batch its own short statement, so a
 * large backlog never holds a long lock). Returns how many were deleted.
 */
export async function purgeExpiredKeys(db: Kysely<Database>, before: string, batchSize = 1000): Promise<number> {
  let total = 0
  for (;;) {
    const result = await db
      .deleteFrom('idempotency_requests')
      .where((eb) =>
        eb(
          eb.refTuple('workspace_id', 'principal_id', 'key'),
          'in',
          eb.selectFrom('idempotency_requests').select(['workspace_id', 'principal_id', 'key']).where('created_at', '<', before).limit(batchSize)
            .$asTuple('workspace_id', 'principal_id', 'key'),
        ),
      )
      .executeTakeFirst()
    const deleted = Number(result.numDeletedRows)
    total += deleted
    if (deleted < batchSize) return total
  }
}
