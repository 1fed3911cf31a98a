// runs.route_calls: whether a call outside the model tool loop (step 0: the task tool route's, an ElevenLabs
// agent's client tools') was ever made in the run, set in the transaction that records the call, which locks the
// run's row (src/runs/tool-calls-task.ts, tool-calls-client.ts). A phase that ends looks for such calls left in flight only in a run
// that has any (tool-calls.ts settleEndedCalls), so a run without tools asks nothing more. Being a column of the
// locked row, it is read fresh under the lock on PostgreSQL (a subquery would see the statement's snapshot).
// Runs with calls already are marked here. Frozen once landed.
import { sql, type Kysely } from 'kysely'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('runs').addColumn('route_calls', 'integer', (c) => c.notNull().defaultTo(0)).execute()
  await sql`update runs set route_calls = 1 where exists (select 1 from tool_calls where tool_calls.run_id = runs.id and tool_calls.step = 0)`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('runs').dropColumn('route_calls').execute()
}
