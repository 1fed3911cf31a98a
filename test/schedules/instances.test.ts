// test lane: clock — several instances firing on the real clock (scripts/test.mjs).
// Two instances on one PostgreSQL database, started together after a schedule missed its ticks: both catch up
// at start-up, and the latest missed tick fires once; then every later tick fires once across the two.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { Cron } from 'croner'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { dialects, freshDatabase, send, TEST_SECRET_KEY } from '../helpers.js'
import { waitFor } from '../runs/agent-server.js'
import { runsOf, waitingStream } from './setup.js'
import { pendingCount } from '../clock.js'

async function instance(url: string): Promise<FastifyInstance> {
  const app = await buildApp(loadConfig({ LOG_LEVEL: 'silent', TANDEM_WORKERS: '4', TANDEM_SECRET_KEY: TEST_SECRET_KEY, DATABASE_URL: url }), { connect: { poolSize: 4 } })
  await app.ready()
  return app
}

for (const dialect of dialects().filter((d) => d === 'postgres')) {
  describe(`schedules across instances (${dialect})`, () => {
    it('the latest missed tick fires once when two instances start together, and each later tick once', { timeout: 90000 }, async () => {
      const database = await freshDatabase(dialect, { ownDatabase: true })
      const apps: FastifyInstance[] = []
      try {
        const first = await instance(database.url)
        const { streamId } = await waitingStream(first, 'shared')
        const schedule = (await send(first, 'POST', `/api/streams/${streamId}/schedules`, { triggerName: 'shared', cron: '*/2 * * * * *', enabled: false })).json()
        // Stopped with a tick a minute old pending: both instances will find it stale at start-up.
        const stale = new Cron('*/2 * * * * *', { paused: true }).previousRuns(30, new Date()).at(-1) as Date
        await first.database.db.updateTable('schedules').set({ enabled: 1, next_run_at: stale.toISOString() }).where('id', '=', schedule.id).execute()
        await first.close()
        apps.push(...(await Promise.all([instance(database.url), instance(database.url)])))
        const [one] = apps as [FastifyInstance, FastifyInstance]
        await waitFor(async () => ((await runsOf(one, streamId)).length >= 4 ? true : undefined), 30000, 'a few ticks')
        await send(one, 'PATCH', `/api/schedules/${schedule.id}`, { enabled: false })
        const disabledAt = Date.now()
        // Until no firing of the schedule is left, pending or running on either instance.
        await waitFor(async () => ((await pendingCount(one, `schedule:${schedule.id}`)) === 0 ? true : undefined), 10000, 'no firing of the schedule left')
        const runs = await runsOf(one, streamId)
        // One run per tick: no more runs than the caught-up tick and the ticks due between it and the PATCH
        // (two instances firing each tick would make about twice as many).
        const firstAt = Math.min(...runs.map((run) => Date.parse(run.createdAt)))
        const ticksDue = 1 + Math.floor(disabledAt / 2000) - Math.floor(firstAt / 2000)
        assert.ok(runs.length <= ticksDue, `${runs.length} runs for ${ticksDue} ticks: ${runs.map((r) => r.createdAt).join(', ')}`)
        assert.ok(firstAt > stale.getTime() + 30000, 'the stale tick fired at start-up, not a minute of ticks one by one')
      } finally {
        for (const app of apps) await app.close()
        await database.drop()
      }
    })
  })
}
