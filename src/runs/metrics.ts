// The run engine's figures for /metrics. Runs that reached a final status are counted by the instance whose change
// finished them, once that change commits (a counter per instance, as Prometheus counters are: sum them across
// instances; a restart starts again from zero, which rate() and increase() take as a reset). The tasks waiting are
// read from the database at scrape time, through the index of open tasks only (migration 0142), so a scrape costs
// what is open, not every task ever made.
import { sql } from 'kysely'
import type { FastifyInstance } from 'fastify'
import { afterCommit } from '../db/retry.js'
import { onInsightEvent } from '../insights/events.js'

/** What `tandem_tasks_waiting` counts: through `run_tasks_open`, which holds the open tasks only. */
export const TASKS_WAITING = sql<{ n: unknown }>`select count(*) as n from run_tasks where state = 'open'`

export function reportRunMetrics(app: FastifyInstance): void {
  const { db } = app.database
  onInsightEvent(db, (event, trx) => {
    if (event.type === 'run_finished') afterCommit(trx, () => app.metrics.runs.inc({ status: event.run.status }))
  })
  app.metrics.sources.tasksWaiting = async () => {
    const { rows } = await TASKS_WAITING.execute(db)
    return Number(rows[0]?.n ?? 0)
  }
}
