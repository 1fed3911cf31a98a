// The width bound of message triggers (src/triggers/chains.ts): every run a message trigger starts belongs to one
// chain, named by what began it (a person's message, or a run that was not started by a message trigger), and a
// chain starts at most MAX_RUNS_PER_CHAIN runs in all, whatever the streams. `trigger_chains` counts a chain's runs
// (a conditional update reserves them, so concurrent jobs never pass the bound) and its refused messages;
// `trigger_chain_runs` says which chain a run belongs to, so the messages it writes are counted there too.
// Rows older than the message passes' retention are purged with them. Frozen once landed.
import type { Kysely } from 'kysely'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('trigger_chains')
    .addColumn('root_id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('runs', 'integer', (c) => c.notNull())
    .addColumn('refused', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('trigger_chains_age').on('trigger_chains').columns(['created_at']).execute()
  await db.schema
    .createTable('trigger_chain_runs')
    .addColumn('run_id', 'text', (c) => c.primaryKey())
    .addColumn('root_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('trigger_chain_runs_age').on('trigger_chain_runs').columns(['created_at']).execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('trigger_chain_runs').execute()
  await db.schema.dropTable('trigger_chains').execute()
}
