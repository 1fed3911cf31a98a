// test lane: clock — a schedule's tick on the real clock while the database is away (scripts/test.mjs).
// A tick that falls while PostgreSQL refuses every connection fires once, when the database is back. The
// schedule's own database stops taking connections (ALLOW_CONNECTIONS false, its sessions ended) across the
// tick; the app keeps running. PostgreSQL only: a SQLite file has no "down".
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { adminQuery as admin, build, dialects, send } from '../helpers.js'
import { waitFor } from '../runs/agent-server.js'
import { runsOf, waitingStream } from './setup.js'
import { pendingJobs } from '../clock.js'

for (const dialect of dialects().filter((d) => d === 'postgres')) {
  describe(`schedules while the database is down (${dialect})`, () => {
    it('fire the missed tick once when the database is back', { timeout: 90000 }, async () => {
      const app = await build(dialect, {}, { ownDatabase: true })
      const database = new URL(app.config.databaseUrl).pathname.slice(1)
      try {
        const { streamId } = await waitingStream(app, 'down')
        const tick = new Date(Math.ceil((Date.now() + 3000) / 1000) * 1000)
        const cron = `${tick.getUTCSeconds()} ${tick.getUTCMinutes()} ${tick.getUTCHours()} * * *`
        const schedule = (await send(app, 'POST', `/api/streams/${streamId}/schedules`, { triggerName: 'down', cron })).json()
        assert.equal(schedule.nextRunAt, tick.toISOString())
        await admin(`alter database ${database} allow_connections false`)
        assert.ok(Date.now() < tick.getTime() - 500, 'the database went down before the tick')
        await admin(`select pg_terminate_backend(pid) from pg_stat_activity where datname = '${database}'`)
        // The tick passes on the real clock, and the worker's polls fail for a while; nothing can be read meanwhile.
        await new Promise((r) => setTimeout(r, tick.getTime() - Date.now() + 3000))
        await admin(`alter database ${database} allow_connections true`)
        const backAt = Date.now()
        const runs = await waitFor(async () => {
          const all = await runsOf(app, streamId).catch(() => [])
          return all.length > 0 ? all : undefined
        }, 45000, 'the tick\'s run once the database is back')
        // Until the only firing left is the next day's (none due, none running).
        await waitFor(async () => ((await pendingJobs(app, `schedule:${schedule.id}`)).every((job) => Date.parse(job.runAt) > Date.now()) ? true : undefined), 10000, 'no firing of the tick left')
        assert.equal((await runsOf(app, streamId)).length, 1)
        assert.deepEqual(runs[0].trigger, { kind: 'schedule', id: schedule.id })
        assert.ok(Date.parse(runs[0].createdAt) >= backAt, 'fired once the database was back, not before')
        const read = (await send(app, 'GET', `/api/schedules/${schedule.id}`)).json()
        assert.equal(read.lastRunAt, tick.toISOString())
      } finally {
        await admin(`alter database ${database} allow_connections true`).catch(() => {})
        await app.close()
      }
    })
  })
}
