// The per-workspace bounds of schedules (docs/limits-and-fair-use.md): at most TANDEM_MAX_ENABLED_SCHEDULES
// enabled schedules, and at most TANDEM_SCHEDULE_FIRINGS_PER_MINUTE ticks fired per clock minute. A tick past
// the second starts nothing (the schedule moves on to its next tick) and the refusal is logged and counted.
import { PostgresAdapter, sql, type Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { AppError } from '../http/problem.js'

/** The clock minute of `at` as stored: `2026-11-28T06:15`. */
const minuteOf = (at: Date) => at.toISOString().slice(0, 16)

/** Takes one firing of the workspace's minute: true when it is within the bound. In the firing's transaction. */
export async function takeFiring(trx: Kysely<Database>, workspaceId: string, at: Date, perMinute: number): Promise<boolean> {
  const minute = minuteOf(at)
  await trx.deleteFrom('schedule_firings').where('workspace_id', '=', workspaceId).where('minute', '<', minute).execute()
  await trx.insertInto('schedule_firings').values({ workspace_id: workspaceId, minute, count: 0 }).onConflict((oc) => oc.columns(['workspace_id', 'minute']).doNothing()).execute()
  const taken = await trx.updateTable('schedule_firings').set((eb) => ({ count: eb('count', '+', 1) })).where('workspace_id', '=', workspaceId).where('minute', '=', minute).where('count', '<', perMinute).executeTakeFirst()
  return Number(taken.numUpdatedRows) > 0
}

/**
 * A 422 (as a stream's bound on schedules) when the workspace has as many enabled schedules as it may (`except`:
 * the schedule being changed). In the transaction that then inserts or enables the schedule: the count and the
 * write are one step for the workspace.
 *
 * Counting is not enough on PostgreSQL: under READ COMMITTED, concurrent creates each count the rows committed
 * before them, all see room, and all insert. So the transaction first takes a transaction-scoped advisory lock
 * named by the workspace (`pg_advisory_xact_lock`, released at its commit or rollback), and the creates and
 * enables of one workspace queue there; the count then sees every committed one. An advisory lock rather than
 * a row lock: the lock needs no row (the count is of rows that may not exist yet), and locking the workspace's
 * row would queue every other write that references the workspace. The key is a 64-bit hash of a name of its
 * own: two workspaces that share a hash only queue together, which is slower, never wrong. SQLite runs one
 * transaction at a time, so there the count is already exact.
 */
export async function requireRoomForEnabled(trx: Kysely<Database>, workspaceId: string, max: number, except?: string): Promise<void> {
  if (trx.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`select pg_advisory_xact_lock(hashtextextended(${`tandem.enabled-schedules:${workspaceId}`}, 0))`.execute(trx)
  }
  let query = trx.selectFrom('schedules').select((eb) => eb.fn.countAll<number>().as('count')).where('workspace_id', '=', workspaceId).where('enabled', '=', 1)
  if (except) query = query.where('id', '!=', except)
  const { count } = await query.executeTakeFirstOrThrow()
  if (Number(count) >= max) {
    throw new AppError('unprocessable', `The workspace has ${Number(count)} enabled schedules, the most it may have (TANDEM_MAX_ENABLED_SCHEDULES=${max}); disable or delete one first, or save this one with "enabled": false.`)
  }
}
