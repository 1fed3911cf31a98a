// Schedules: validation with pointers, CRUD, nextRunAt in a time zone, runs that say a schedule started them,
// exactly one firing per tick (a job run twice, two jobs at once), catch-up of the latest missed tick.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { Cron } from 'croner'
import { build, dialects, pointers, send } from '../helpers.js'
import { waitFor } from '../runs/agent-server.js'
import { catchUpSchedules, fireSchedule } from '../../src/schedules/firing.js'
import { keyFor, runsOf, waitingStream } from './setup.js'
import { pendingJobs } from '../clock.js'

for (const dialect of dialects()) {
  describe(`schedules (${dialect})`, () => {
    let app: FastifyInstance
    before(async () => {
      app = await build(dialect, {}, { ownDatabase: true })
    })
    after(async () => app.close())

    it('refuses a bad cron, time zone or input with a pointer each, and changes nothing', async () => {
      const { streamId } = await waitingStream(app, 'bad')
      const url = `/api/streams/${streamId}/schedules`
      const both = await send(app, 'POST', url, { triggerName: 'bad', cron: '61 * * * *', timezone: 'Mars/Olympus' })
      assert.equal(both.statusCode, 400)
      assert.deepEqual(pointers(both), ['/cron', '/timezone'])
      for (const cron of ['* * * *', '* * * * * * *', 'every monday', '0 0 30 2 *']) {
        const res = await send(app, 'POST', url, { triggerName: 'bad', cron })
        assert.equal(res.statusCode, 400, cron)
        assert.deepEqual(pointers(res), ['/cron'], cron)
      }
      const big = await send(app, 'POST', url, { triggerName: 'bad', cron: '* * * * *', input: { blob: 'x'.repeat(64 * 1024) } })
      assert.equal(big.statusCode, 400)
      assert.deepEqual(pointers(big), ['/input'])
      const atBound = await send(app, 'POST', url, { triggerName: 'bad', cron: '* * * * *', enabled: false, input: { b: 'x'.repeat(64 * 1024 - 10) } })
      assert.equal(atBound.statusCode, 201, atBound.body)
      const list = await send(app, 'GET', url)
      assert.equal(list.json().data.length, 1)
    })

    it('computes nextRunAt in the schedule\'s time zone (five fields) and takes six fields with seconds', async () => {
      const { streamId } = await waitingStream(app, 'tz')
      const res = await send(app, 'POST', `/api/streams/${streamId}/schedules`, { triggerName: 'tz', cron: '0 9 * * 1', timezone: 'Europe/Paris', enabled: true })
      assert.equal(res.statusCode, 201, res.body)
      const schedule = res.json()
      assert.equal(res.headers.location, `/api/schedules/${schedule.id}`)
      assert.equal(schedule.timezone, 'Europe/Paris')
      const paris = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Paris', weekday: 'short', hour: '2-digit', minute: '2-digit', hour12: false }).format(new Date(schedule.nextRunAt))
      assert.equal(paris, 'Mon 09:00')
      assert.ok(Date.parse(schedule.nextRunAt) > Date.now())
      const six = await send(app, 'POST', `/api/streams/${streamId}/schedules`, { triggerName: 'tz', cron: '30 0 0 1 1 *', enabled: false })
      assert.equal(six.statusCode, 201, six.body)
      assert.equal(six.json().nextRunAt, null, 'disabled: no next run')
      assert.equal(six.json().timezone, 'UTC')
    })

    it('reads, changes and deletes; another workspace sees a 404', async () => {
      const { streamId } = await waitingStream(app, 'crud')
      const created = (await send(app, 'POST', `/api/streams/${streamId}/schedules`, { triggerName: 'crud', cron: '0 0 1 1 *' })).json()
      assert.equal((await send(app, 'GET', `/api/schedules/${created.id}`)).json().cron, '0 0 1 1 *')
      const elsewhere = await keyFor(app, 'outsider', 'admin', 'elsewhere')
      assert.equal((await send(app, 'GET', `/api/schedules/${created.id}`, undefined, elsewhere)).statusCode, 404)
      const off = await send(app, 'PATCH', `/api/schedules/${created.id}`, { enabled: false })
      assert.equal(off.statusCode, 200)
      assert.equal(off.json().nextRunAt, null)
      const bad = await send(app, 'PATCH', `/api/schedules/${created.id}`, { cron: 'nope' })
      assert.deepEqual(pointers(bad), ['/cron'])
      assert.equal((await send(app, 'GET', `/api/schedules/${created.id}`)).json().cron, '0 0 1 1 *', 'a refused change changes nothing')
      const on = await send(app, 'PATCH', `/api/schedules/${created.id}`, { enabled: true, cron: '0 12 * * *' })
      assert.equal(new Date(on.json().nextRunAt).getUTCHours(), 12)
      assert.equal((await send(app, 'DELETE', `/api/schedules/${created.id}`)).statusCode, 204)
      assert.equal((await send(app, 'GET', `/api/schedules/${created.id}`)).statusCode, 404)
    })

    it('fires every tick once, and the run says a schedule started it', { timeout: 40000 }, async () => {
      const { streamId } = await waitingStream(app, 'every-second')
      const schedule = (await send(app, 'POST', `/api/streams/${streamId}/schedules`, { triggerName: 'every-second', cron: '*/2 * * * * *', input: { from: 'cron' } })).json()
      const runs = await waitFor(async () => {
        const all = await runsOf(app, streamId)
        return all.length >= 2 ? all : undefined
      }, 25000, 'two scheduled runs')
      await send(app, 'PATCH', `/api/schedules/${schedule.id}`, { enabled: false })
      for (const run of runs) {
        assert.deepEqual(run.trigger, { kind: 'schedule', id: schedule.id })
        assert.deepEqual(run.input, { from: 'cron' })
        assert.equal(run.depth, 0)
      }
      const read = (await send(app, 'GET', `/api/schedules/${schedule.id}`)).json()
      assert.equal(read.nextRunAt, null)
      assert.ok(read.lastRunAt)
    })

    it('a tick\'s job run twice, or two jobs of one tick at once, start one run', async () => {
      const { streamId } = await waitingStream(app, 'twice')
      const schedule = (await send(app, 'POST', `/api/streams/${streamId}/schedules`, { triggerName: 'twice', cron: '0 0 1 1 *' })).json()
      const job = { scheduleId: schedule.id, tick: schedule.nextRunAt }
      const deps = { settings: app.config.runs, log: app.log, firingsPerMinute: 120 }
      await Promise.all([fireSchedule(deps, app.database.db, job), fireSchedule(deps, app.database.db, job)])
      await fireSchedule(deps, app.database.db, job)
      const runs = await runsOf(app, streamId)
      assert.equal(runs.length, 1)
      const read = (await send(app, 'GET', `/api/schedules/${schedule.id}`)).json()
      assert.equal(read.lastRunAt, schedule.nextRunAt)
      assert.ok(Date.parse(read.nextRunAt) > Date.parse(schedule.nextRunAt), 'waits for the next tick')
      await send(app, 'DELETE', `/api/schedules/${schedule.id}`)
    })

    it('a schedule whose ticks were missed fires once, as the latest missed tick', async () => {
      const { streamId } = await waitingStream(app, 'missed')
      const schedule = (await send(app, 'POST', `/api/streams/${streamId}/schedules`, { triggerName: 'missed', cron: '*/10 * * * *' })).json()
      // As if the instance had stopped an hour ago: its tick then is long past, five more were missed since.
      const stale = new Cron('*/10 * * * *', { paused: true }).previousRuns(6, new Date())
      const oldest = (stale[stale.length - 1] as Date).toISOString()
      await app.database.db.updateTable('schedules').set({ next_run_at: oldest }).where('id', '=', schedule.id).execute()
      const caughtUp = await catchUpSchedules(app.database.db)
      assert.ok(caughtUp >= 1)
      const runs = await waitFor(async () => {
        const all = await runsOf(app, streamId)
        return all.length >= 1 ? all : undefined
      }, 15000, 'the caught-up run')
      // Nothing more is coming: the one job left for the schedule is its next tick's, in the future.
      const read = (await send(app, 'GET', `/api/schedules/${schedule.id}`)).json()
      await waitFor(async () => {
        const due = (await pendingJobs(app, `schedule:${schedule.id}:`)).map((job) => job.runAt)
        return due.length === 1 && due[0] === read.nextRunAt ? true : undefined
      }, 15000, 'only the next tick\'s job')
      assert.equal((await runsOf(app, streamId)).length, 1, 'one run for all the missed ticks')
      assert.equal(runs[0].trigger.kind, 'schedule')
      assert.equal(read.lastRunAt, (stale[0] as Date).toISOString(), 'fired as the latest missed tick')
      assert.ok(Date.parse(read.nextRunAt) > Date.now() - 1000)
      // The old tick's job, should it still run (a crash after the commit), starts nothing.
      await fireSchedule({ settings: app.config.runs, log: app.log, firingsPerMinute: 120 }, app.database.db, { scheduleId: schedule.id, tick: oldest })
      assert.equal((await runsOf(app, streamId)).length, 1)
    })

    it('runs started by hand say so', async () => {
      const { streamId } = await waitingStream(app, 'by-hand')
      const res = await send(app, 'POST', `/api/streams/${streamId}/triggers/by-hand`, { input: {} })
      assert.equal(res.statusCode, 202)
      // The trigger answers run ids and statuses (at most 20 runs); the run itself says what started it.
      const run = (await send(app, 'GET', `/api/runs/${res.json().runs[0].id}`)).json()
      assert.deepEqual(run.trigger, { kind: 'manual', id: null })
      assert.equal(run.depth, 0)
    })
  })
}
