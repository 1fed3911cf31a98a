// Decision policies (docs/operators.md): a saved cycle's optional `policy`, and the effects of the decision
// clock's timers, one row per timer that took effect (its job key), so a timer job that runs twice (a crash
// between its effect's commit and the job's removal, or two instances) takes effect once. Frozen once landed.
import type { Kysely } from 'kysely'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('cycles').addColumn('policy', 'text').execute()
  await db.schema
    .createTable('clock_effects')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('clock_effects_run').on('clock_effects').columns(['run_id']).execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('clock_effects').execute()
  await db.schema.alterTable('cycles').dropColumn('policy').execute()
}
