// The bounds of schedules: two ticks at least 2 s apart (every second → 400 at /cron, every two seconds
// accepted), a workspace's enabled schedules capped (TANDEM_MAX_ENABLED_SCHEDULES) and its firings per clock
// minute (TANDEM_SCHEDULE_FIRINGS_PER_MINUTE): a tick past them starts nothing, moves on, and is counted.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, pointers, send } from '../helpers.js'
import { fireSchedule } from '../../src/schedules/firing.js'
import { keyFor, runsOf, waitingStream } from './setup.js'

for (const dialect of dialects()) {
  describe(`schedule bounds (${dialect})`, () => {
    let app: FastifyInstance
    before(async () => {
      app = await build(dialect, { TANDEM_MAX_ENABLED_SCHEDULES: '3', TANDEM_SCHEDULE_FIRINGS_PER_MINUTE: '2' }, { ownDatabase: true })
    })
    after(async () => app.close())

    it('refuses a cron that fires more often than every 2 seconds, on create and on change; every 2 seconds is accepted', async () => {
      const { streamId } = await waitingStream(app, 'often')
      const url = `/api/streams/${streamId}/schedules`
      for (const cron of ['* * * * * *', '0,1 * * * * *', '1-3 * * * * *', '0,59 * * * * *', '*/1 * * * * *']) {
        const res = await send(app, 'POST', url, { triggerName: 'often', cron, enabled: false })
        assert.equal(res.statusCode, 400, cron)
        assert.deepEqual(pointers(res), ['/cron'], cron)
        assert.match(res.json().errors[0].detail, /at least 2 s apart/)
      }
      const every2 = await send(app, 'POST', url, { triggerName: 'often', cron: '*/2 * * * * *', enabled: false })
      assert.equal(every2.statusCode, 201, every2.body)
      assert.equal((await send(app, 'POST', url, { triggerName: 'often', cron: '0,58 * * * * *', enabled: false })).statusCode, 201)
      const changed = await send(app, 'PATCH', `/api/schedules/${every2.json().id}`, { cron: '* * * * * *' })
      assert.equal(changed.statusCode, 400)
      assert.deepEqual(pointers(changed), ['/cron'])
      assert.equal((await send(app, 'GET', `/api/schedules/${every2.json().id}`)).json().cron, '*/2 * * * * *', 'nothing changed')
    })

    it('caps a workspace\'s enabled schedules: one more is a 422, disabled ones are free, another workspace has its own', async () => {
      const { streamId } = await waitingStream(app, 'cap')
      const url = `/api/streams/${streamId}/schedules`
      const ids: string[] = []
      for (let i = 0; i < 3; i++) {
        const res = await send(app, 'POST', url, { triggerName: 'cap', cron: '0 0 1 1 *' })
        assert.equal(res.statusCode, 201, res.body)
        ids.push(res.json().id)
      }
      const fourth = await send(app, 'POST', url, { triggerName: 'cap', cron: '0 0 1 1 *' })
      assert.equal(fourth.statusCode, 422, fourth.body)
      assert.match(fourth.json().detail, /TANDEM_MAX_ENABLED_SCHEDULES=3/)
      const off = await send(app, 'POST', url, { triggerName: 'cap', cron: '0 0 1 1 *', enabled: false })
      assert.equal(off.statusCode, 201)
      assert.equal((await send(app, 'PATCH', `/api/schedules/${off.json().id}`, { enabled: true })).statusCode, 422)
      assert.equal((await send(app, 'PATCH', `/api/schedules/${ids[0]}`, { cron: '0 0 2 1 *' })).statusCode, 200, 'an enabled one may still change')
      assert.equal((await send(app, 'PATCH', `/api/schedules/${ids[0]}`, { enabled: false })).statusCode, 200)
      assert.equal((await send(app, 'PATCH', `/api/schedules/${off.json().id}`, { enabled: true })).statusCode, 200, 'room again')
      const elsewhere = await keyFor(app, 'other-ws', 'admin', 'cap-elsewhere')
      const stream = (await send(app, 'POST', '/api/streams', { name: 'elsewhere' }, elsewhere)).json()
      assert.equal((await send(app, 'POST', `/api/streams/${stream.id}/schedules`, { triggerName: 'cap', cron: '0 0 1 1 *' }, elsewhere)).statusCode, 201)
      for (const id of [...ids, off.json().id]) await send(app, 'DELETE', `/api/schedules/${id}`)
    })

    it('concurrent creates and enables at the cap: exactly the cap is enabled, every other one is a 422', async () => {
      const auth = await keyFor(app, 'cap-race', 'admin', 'cap-race-ws')
      const stream = (await send(app, 'POST', '/api/streams', { name: 'race' }, auth)).json()
      const url = `/api/streams/${stream.id}/schedules`
      const off: string[] = []
      for (let i = 0; i < 6; i++) off.push((await send(app, 'POST', url, { triggerName: 'race', cron: '0 0 1 1 *', enabled: false }, auth)).json().id)
      // 18 creates and 6 enables at once, with room for 3 (PostgreSQL runs them on several connections).
      const answers = await Promise.all([
        ...Array.from({ length: 18 }, () => send(app, 'POST', url, { triggerName: 'race', cron: '0 0 1 1 *' }, auth)),
        ...off.map((id) => send(app, 'PATCH', `/api/schedules/${id}`, { enabled: true }, auth)),
      ])
      const codes = answers.map((res) => res.statusCode)
      assert.equal(codes.filter((code) => code === 201 || code === 200).length, 3, codes.join(' '))
      assert.equal(codes.filter((code) => code === 422).length, 21, codes.join(' '))
      const enabled = await app.database.db.selectFrom('schedules').select((eb) => eb.fn.countAll<string | number>().as('count'))
        .where('workspace_id', '=', (await send(app, 'GET', '/api/me', undefined, auth)).json().workspaceId).where('enabled', '=', 1).executeTakeFirstOrThrow()
      assert.equal(Number(enabled.count), 3)
    })

    it('fires at most TANDEM_SCHEDULE_FIRINGS_PER_MINUTE ticks per workspace and minute; a tick past it starts nothing, moves on and is counted', async () => {
      const { streamId } = await waitingStream(app, 'rate')
      const schedules = []
      for (let i = 0; i < 3; i++) schedules.push((await send(app, 'POST', `/api/streams/${streamId}/schedules`, { triggerName: 'rate', cron: '0 0 1 1 *' })).json())
      const minute = new Date('2030-01-01T10:00:05Z')
      const deps = { settings: app.config.runs, log: app.log, metrics: app.metrics, firingsPerMinute: 2, now: () => minute }
      // All three at once (on PostgreSQL, three transactions on three connections): the conditional update of the
      // minute's count lets exactly two through.
      await Promise.all(schedules.map((schedule) => fireSchedule(deps, app.database.db, { scheduleId: schedule.id, tick: schedule.nextRunAt })))
      assert.equal((await runsOf(app, streamId)).length, 2, 'two ticks fired, the third started nothing')
      const read = await Promise.all(schedules.map(async (schedule) => (await send(app, 'GET', `/api/schedules/${schedule.id}`)).json()))
      for (const [i, schedule] of read.entries()) {
        assert.equal(schedule.lastRunAt, schedules[i].nextRunAt, 'every tick is spent, the refused one too')
        assert.ok(Date.parse(schedule.nextRunAt) > Date.parse(schedules[i].nextRunAt), 'and each schedule waits for its next one')
      }
      assert.match((await send(app, 'GET', '/metrics')).body, /tandem_trigger_refusals_total\{reason="schedule-rate"\} 1/)
      // The next minute has its own firings.
      const next = await send(app, 'PATCH', `/api/schedules/${schedules[2].id}`, { cron: '0 0 2 1 *' })
      minute.setUTCMinutes(1)
      await fireSchedule(deps, app.database.db, { scheduleId: schedules[2].id, tick: next.json().nextRunAt })
      assert.equal((await runsOf(app, streamId)).length, 3)
      for (const schedule of schedules) await send(app, 'DELETE', `/api/schedules/${schedule.id}`)
    })
  })
}
