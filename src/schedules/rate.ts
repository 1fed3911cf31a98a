// The per-workspace bounds of schedules (docs/limits-and-fair-use.md): at most TANDEM_MAX_ENABLED_SCHEDULES
// enabled schedules, and at most TANDEM_SCHEDULE_FIRINGS_PER_MINUTE ticks fired per clock minute. A tick past
// the second starts nothing (the schedule moves on to its next tick) and the refusal is logged and counted.
import type { Kysely } from 'kysely'
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

/** A 422 (as a stream's bound on schedules) when the workspace has as many enabled schedules as it may (`except`: the schedule being changed). */
export async function requireRoomForEnabled(trx: Kysely<Database>, workspaceId: string, max: number, except?: string): Promise<void> {
  let query = trx.selectFrom('schedules').select((eb) => eb.fn.countAll<number>().as('count')).where('workspace_id', '=', workspaceId).where('enabled', '=', 1)
  if (except) query = query.where('id', '!=', except)
  const { count } = await query.executeTakeFirstOrThrow()
  if (Number(count) >= max) {
    throw new AppError('unprocessable', `The workspace has ${Number(count)} enabled schedules, the most it may have (TANDEM_MAX_ENABLED_SCHEDULES=${max}); disable or delete one first, or save this one with "enabled": false.`)
  }
}
