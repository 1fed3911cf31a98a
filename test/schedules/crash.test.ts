// test lane: clock — server processes killed (SIGKILL) and restarted (scripts/test.mjs).
// A server killed (SIGKILL) while a schedule's tick is being fired starts one run for that tick, not two, once
// it is back; and a restart after the tick's commit starts nothing more. The kill lands while the firing is held
// up by a lock the test takes: PostgreSQL — a row lock on the schedule, so the job is running (locked by the
// dead worker) when the process dies; SQLite — the database's write lock, so the worker is blocked taking the
// job when it dies (one writer per file: the job and its run cannot be parted any finer).
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { request, serverGroup } from '../child-server.js'
import { dialects, freshDatabase } from '../helpers.js'
import { holdLock, someoneWaitsOnALock } from '../hold-lock.js'
import { queuedJobs, queueSettled } from '../queue.js'
import { waitFor } from '../wait.js'

const NIL = '00000000-0000-0000-0000-000000000000'
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

for (const dialect of dialects()) {
  describe(`schedules survive a SIGKILL mid-firing (${dialect})`, () => {
    it('fires the tick once after the restart, and never again', { timeout: 120000 }, async () => {
      const database = await freshDatabase(dialect, { ownDatabase: true })
      const servers = serverGroup({ DATABASE_URL: database.url, TANDEM_AUTH: 'local' })
      let release: (() => Promise<void>) | undefined
      try {
        const first = servers.start()
        const base = await first.url
        const streamId = (await request(base, 'POST', '/api/streams', { name: 'crash' })).json.id
        const phase = { id: randomUUID(), agentId: NIL, goal: 'g', instructions: 'i', autoAdvance: false, phaseName: 'Review', operatorPool: [] }
        assert.equal((await request(base, 'POST', `/api/cycles/streams/${streamId}/cycles`, { triggerName: 'nightly', description: 'd', phasesTemplate: [phase] })).status, 201)
        // A tick a few seconds from now, once a day (six fields, seconds first, UTC).
        const tick = new Date(Math.ceil((Date.now() + 6000) / 1000) * 1000)
        const cron = `${tick.getUTCSeconds()} ${tick.getUTCMinutes()} ${tick.getUTCHours()} * * *`
        const schedule = (await request(base, 'POST', `/api/streams/${streamId}/schedules`, { triggerName: 'nightly', cron })).json
        assert.equal(schedule.nextRunAt, tick.toISOString())
        release = await holdLock(dialect, database.url, { table: 'schedules', id: schedule.id })
        if (dialect === 'postgres') {
          await waitFor(() => someoneWaitsOnALock(database.url), { timeoutMs: tick.getTime() - Date.now() + 15000, what: 'the tick\'s firing to wait on the held row' })
        } else {
          // The tick falls due on the real clock; a worker waiting for SQLite's write lock shows nowhere outside its process.
          await sleep(tick.getTime() - Date.now() + 1500)
        }
        await first.stop('SIGKILL')
        await release()
        release = undefined

        const restartedAt = new Date()
        const second = servers.start()
        const again = await second.url
        const runs = await waitFor(async () => {
          const page = (await request(again, 'GET', `/api/cycles/streams/${streamId}/runs`)).json
          return page.data.length > 0 ? page.data : undefined
        }, { timeoutMs: 30000, what: 'the tick\'s run after the restart' })
        // Until no firing of the schedule can run any more (a job taken before the restart was the dead server's).
        await waitFor(() => queueSettled(database.url, 'schedules.fire', schedule.id, restartedAt), { what: 'the schedule\'s firings to settle after the restart' })
        const afterRestart = (await request(again, 'GET', `/api/cycles/streams/${streamId}/runs`)).json.data
        assert.equal(afterRestart.length, 1, 'one run for the tick, not two')
        assert.deepEqual(runs[0].trigger, { kind: 'schedule', id: schedule.id })
        const read = (await request(again, 'GET', `/api/schedules/${schedule.id}`)).json
        assert.equal(read.lastRunAt, tick.toISOString())
        assert.equal(read.nextRunAt, new Date(tick.getTime() + 86400000).toISOString())

        // Killed again after the tick committed: the next start finds nothing to fire.
        await second.stop('SIGKILL')
        const thirdAt = new Date()
        const third = await servers.start().url
        await waitFor(() => queueSettled(database.url, 'schedules.fire', schedule.id, thirdAt), { what: 'the schedule\'s firings to settle after the third start' })
        const waiting = (await queuedJobs(database.url, 'schedules.fire', schedule.id)).filter((job) => job.lockedAt === null)
        assert.deepEqual(waiting.map((job) => job.runAt.toISOString()), [read.nextRunAt], 'only the next day\'s tick waits')
        assert.equal((await request(third, 'GET', `/api/cycles/streams/${streamId}/runs`)).json.data.length, 1)
      } finally {
        await release?.()
        await servers.stopAll('SIGKILL')
        await database.drop()
      }
    })
  })
}
