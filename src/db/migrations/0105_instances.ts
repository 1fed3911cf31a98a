// Instances and their heartbeats (src/failover/): one row per running instance, with the id graphile-worker
// locks its jobs with, so that a live instance can tell a dead one's jobs and claims from a live one's. An
// idempotency claim records the instance that holds it (null for claims made before this migration).
// Frozen once landed.
import type { Kysely } from 'kysely'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('instances')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('worker_pool_id', 'text')
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('heartbeat_ms', 'bigint', (c) => c.notNull())
    .execute()
  await db.schema.alterTable('idempotency_requests').addColumn('instance_id', 'text').execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('idempotency_requests').dropColumn('instance_id').execute()
  await db.schema.dropTable('instances').execute()
}
