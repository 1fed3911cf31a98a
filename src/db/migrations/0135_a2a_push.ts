// A2A push notifications (src/a2a/push.ts, push-delivery.ts). a2a_push_configs: a caller's push configs of a task,
// one row per (task, maker, the config's own id); `id` is the row's own (the vault's associated data for both
// sealed secrets, and what deliveries point at), so a config replaced under the same id keeps it. The token and
// the authentication credentials are sealed by the vault; the scheme is not a secret. a2a_push_deliveries: one
// POST of one update to one config, created with its job in the transaction of the run's change; its id is the
// `webhook-id`, the same on every attempt. a2a_tasks.artifact_keys: the artifacts last seen on the task (id → a
// digest of the text), so a change of the run sends each new or changed artifact once. Frozen once landed.
import type { Kysely } from 'kysely'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('a2a_push_configs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('run_id', 'text', (c) => c.notNull())
    .addColumn('principal_id', 'text', (c) => c.notNull())
    .addColumn('config_id', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('token_key_id', 'text')
    .addColumn('token_ciphertext', 'text')
    .addColumn('auth_scheme', 'text')
    .addColumn('credentials_key_id', 'text')
    .addColumn('credentials_ciphertext', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('a2a_push_configs_by_maker', ['run_id', 'principal_id', 'config_id'])
    .execute()
  await db.schema
    .createTable('a2a_push_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('config_row_id', 'text', (c) => c.notNull())
    .addColumn('run_id', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('last_status', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('next_attempt_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('a2a_push_deliveries_by_config').on('a2a_push_deliveries').columns(['config_row_id', 'id']).execute()
  await db.schema.alterTable('a2a_tasks').addColumn('artifact_keys', 'text').execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('a2a_tasks').dropColumn('artifact_keys').execute()
  await db.schema.dropTable('a2a_push_deliveries').execute()
  await db.schema.dropTable('a2a_push_configs').execute()
}
