// The `instances` table as Kysely sees it (owned by src/failover/registry.ts; types only).

export interface InstanceTable {
  id: string
  /** graphile-worker's id for this instance's worker pool: its jobs are locked with it (null: no workers). */
  worker_pool_id: string | null
  started_at: string
  /** The last heartbeat, in milliseconds since the epoch by the database's clock (PostgreSQL) or the process's (SQLite). */
  heartbeat_ms: number | string
}
