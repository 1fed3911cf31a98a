// How a schedule fires (docs/operators.md "Schedules"). A schedule has one pending job, keyed by the schedule and
// the tick it waits for (`schedule:<id>:<tick>`; graphile-worker's job keys on PostgreSQL, the jobs table's
// unique key on SQLite). The job fires only if the schedule still waits for that tick: a compare-and-set
// moves `next_run_at` on, in the transaction that starts the runs and enqueues the next tick's job. So a job
// that runs twice (a crash after its commit, a duplicate from a start-up) fires nothing the second time, and
// two instances never fire one tick twice. Ticks missed while no instance ran collapse into one: a late job
// moves straight to the first tick after now, and start-up relabels a stale one as the latest missed tick.
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { enqueueJob, removeJob } from '../jobs/index.js'
import { fireStreamTriggerInJob, type JobFireDeps } from '../triggers/fire.js'
import { latestTick, nextTick } from './cron.js'
import { takeFiring } from './rate.js'
import { recordRefusal, type RefusalSink } from '../triggers/refusals.js'
import type { ScheduleRow } from './store.js'

declare module '../jobs/registry.js' {
  interface JobPayloads {
    'schedules.fire': ScheduleJob
  }
}

export const SCHEDULE_JOB = 'schedules.fire'

export interface ScheduleJob {
  scheduleId: string
  /** The tick (ISO 8601) this job fires. */
  tick: string
}

/** A firing's dependencies: the workspace's firings per minute (TANDEM_SCHEDULE_FIRINGS_PER_MINUTE) besides a job's. */
export interface ScheduleFireDeps extends JobFireDeps, RefusalSink {
  firingsPerMinute: number
  /** The clock the minute is read from (tests inject one). */
  now?: () => Date
}

const jobKeyOf = (scheduleId: string, tick: string) => `schedule:${scheduleId}:${tick}`

/** Enqueues the job of the schedule's next tick (nothing when disabled or without one). In the caller's transaction. */
export async function armSchedule(db: Kysely<Database>, row: Pick<ScheduleRow, 'id' | 'enabled' | 'next_run_at'>): Promise<void> {
  if (Number(row.enabled) !== 1 || row.next_run_at === null) return
  const job: ScheduleJob = { scheduleId: row.id, tick: row.next_run_at }
  await enqueueJob(db, SCHEDULE_JOB, job, { jobKey: jobKeyOf(row.id, row.next_run_at), runAt: new Date(row.next_run_at) })
}

/** Drops the pending job of the tick the schedule waits for. In the caller's transaction. */
export async function disarmSchedule(db: Kysely<Database>, row: Pick<ScheduleRow, 'id' | 'next_run_at'>): Promise<void> {
  if (row.next_run_at !== null) await removeJob(db, jobKeyOf(row.id, row.next_run_at))
}

/** The first tick after `after` as stored (ISO 8601), or null. */
export function nextRunAfter(row: Pick<ScheduleRow, 'cron' | 'timezone'>, after: Date): string | null {
  return nextTick(row.cron, row.timezone, after)?.toISOString() ?? null
}

/** The job: fires the tick if the schedule still waits for it; then waits for the first tick after now. */
export async function fireSchedule(deps: ScheduleFireDeps, db: Kysely<Database>, job: ScheduleJob): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom('schedules').selectAll().where('id', '=', job.scheduleId).executeTakeFirst()
    if (!row || Number(row.enabled) !== 1 || row.next_run_at !== job.tick) return
    const after = new Date(Math.max(Date.now(), Date.parse(job.tick)))
    const next = nextRunAfter(row, after)
    const moved = await trx
      .updateTable('schedules')
      .set({ next_run_at: next, last_run_at: job.tick })
      .where('id', '=', row.id)
      .where('next_run_at', '=', job.tick)
      .where('enabled', '=', 1)
      .executeTakeFirst()
    if (Number(moved.numUpdatedRows) === 0) return
    // Past the workspace's firings of this minute the tick starts nothing; the schedule still moves on.
    if (!(await takeFiring(trx, row.workspace_id, deps.now?.() ?? new Date(), deps.firingsPerMinute))) {
      recordRefusal(deps, 'schedule-rate', { scheduleId: row.id, streamId: row.stream_id, tick: job.tick },
        `a schedule's tick started nothing: its workspace fired ${deps.firingsPerMinute} ticks this minute (TANDEM_SCHEDULE_FIRINGS_PER_MINUTE)`)
    } else await fireStreamTriggerInJob(deps, trx, {
      workspaceId: row.workspace_id,
      streamId: row.stream_id,
      triggerName: row.trigger_name,
      input: JSON.parse(row.input) as Record<string, unknown>,
      createdBy: row.created_by,
      trigger: { kind: 'schedule', id: row.id },
    })
    await armSchedule(trx, { id: row.id, enabled: 1, next_run_at: next })
  })
}

/**
 * Start-up: every enabled schedule has the job of its tick (re-enqueued under the same key: a no-op when it is
 * there); one whose tick passed while no instance ran now waits for the latest missed tick, due at once.
 */
export async function catchUpSchedules(db: Kysely<Database>, at = new Date()): Promise<number> {
  let caughtUp = 0
  let after = ''
  for (;;) {
    const rows = await db.selectFrom('schedules').selectAll().where('enabled', '=', 1).where('next_run_at', 'is not', null).where('id', '>', after).orderBy('id').limit(200).execute()
    for (const row of rows) {
      await db.transaction().execute(async (trx) => {
        const stale = row.next_run_at !== null && Date.parse(row.next_run_at) < at.getTime()
        const latest = stale ? latestTick(row.cron, row.timezone, at)?.toISOString() : undefined
        if (latest === undefined || latest === row.next_run_at) return armSchedule(trx, row)
        const moved = await trx.updateTable('schedules').set({ next_run_at: latest }).where('id', '=', row.id).where('next_run_at', '=', row.next_run_at).executeTakeFirst()
        if (Number(moved.numUpdatedRows) === 0) return // fired meanwhile by a running instance
        await disarmSchedule(trx, row)
        await armSchedule(trx, { ...row, next_run_at: latest })
        caughtUp++
      })
    }
    if (rows.length < 200) return caughtUp
    after = (rows[rows.length - 1] as ScheduleRow).id
  }
}
