// The `idempotency_requests` table as Kysely sees it (owned by src/idempotency/store.ts; types only).

export interface IdempotencyRequestTable {
  workspace_id: string
  /** The caller's principal: a key is scoped to whoever sent it, not shared across the workspace. */
  principal_id: string
  key: string
  request_hash: string
  /** Who holds the row: the response is stored only by the request that claimed it (a taken-over claim loses). */
  claim_id: string
  /** 0 while the first request is being carried out (the in-flight marker), else the stored response's status. */
  status: number
  headers: string
  body: string
  created_at: string
  /** The instance carrying the request out (src/failover/): a claim whose instance is dead is released. */
  instance_id: string | null
}
