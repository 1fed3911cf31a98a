// The task time-out paused while Tandem's operators are asked on behalf of a remote A2A task (src/a2a/remote-clock.ts):
// run_tasks.clock_paused_at is when the current pause began (null: the clock runs; no time-out is armed while it is
// set), run_tasks.clock_paused_ms how long the task's clock stood still in all, so a time-out armed again is due that
// much later. Frozen once landed.
import type { Kysely } from 'kysely'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('run_tasks').addColumn('clock_paused_at', 'text').execute()
  await db.schema.alterTable('run_tasks').addColumn('clock_paused_ms', 'bigint', (c) => c.notNull().defaultTo(0)).execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('run_tasks').dropColumn('clock_paused_ms').execute()
  await db.schema.alterTable('run_tasks').dropColumn('clock_paused_at').execute()
}
