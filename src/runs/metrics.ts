// The run engine's figures for /metrics, read from the database at scrape time: the same on every instance, and
// right after a restart (a counter kept in memory would start again from zero and miss other instances' runs).
import type { FastifyInstance } from 'fastify'
import { FINISHED_RUN_STATUSES } from './schemas.js'

export function reportRunMetrics(app: FastifyInstance): void {
  const { db } = app.database
  app.metrics.sources.finishedRuns = async () => {
    const rows = await db
      .selectFrom('runs')
      .select(['status', (eb) => eb.fn.countAll<number>().as('count')])
      .where('status', 'in', [...FINISHED_RUN_STATUSES])
      .groupBy('status')
      .execute()
    return rows.map((row) => ({ status: row.status, count: Number(row.count) }))
  }
  app.metrics.sources.tasksWaiting = async () => {
    const row = await db.selectFrom('run_tasks').select((eb) => eb.fn.countAll<number>().as('count')).where('state', '=', 'open').executeTakeFirst()
    return Number(row?.count ?? 0)
  }
}
