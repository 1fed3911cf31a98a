// Runs of saved cycles, their tasks, and who wrote a message (a principal, or an agent a run posted for).
// Frozen once landed.
import type { Kysely } from 'kysely'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('runs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('stream_id', 'text', (c) => c.notNull().references('streams.id'))
    .addColumn('status', 'text', (c) => c.notNull())
    // The run as GET returns it (phases included): written whole by the state machine, in one place.
    .addColumn('document', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('runs_stream').on('runs').columns(['stream_id', 'id']).execute()
  await db.schema.createIndex('runs_stream_status').on('runs').columns(['stream_id', 'status', 'id']).execute()

  await db.schema
    .createTable('run_tasks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id'))
    .addColumn('phase_run_id', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('feedback', 'text')
    // push: an adapter delivers it; claim: an agent key claims it.
    .addColumn('delivery', 'text', (c) => c.notNull())
    // open, answered, failed, canceled, superseded
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text')
    // JSON array: hashes of tokens a re-claim replaced (their answers are a 409, not a 401).
    .addColumn('past_token_hashes', 'text', (c) => c.notNull().defaultTo('[]'))
    // push: the instance delivering it holds it until then; claim: the claim's lease.
    .addColumn('lease_until', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('closed_at', 'text')
    .execute()
  await db.schema.createIndex('run_tasks_run').on('run_tasks').columns(['run_id']).execute()
  await db.schema.createIndex('run_tasks_claim').on('run_tasks').columns(['agent_id', 'state', 'delivery', 'id']).execute()

  await db.schema.alterTable('messages').addColumn('author_type', 'text', (c) => c.notNull().defaultTo('principal')).execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('messages').dropColumn('author_type').execute()
  await db.schema.dropTable('run_tasks').execute()
  await db.schema.dropTable('runs').execute()
}
