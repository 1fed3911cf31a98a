// Another workspace's schedules, message triggers, inbound hooks and inbox items are a 404 to an admin of
// this one, for every route that names them, and nothing changes.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { runIn } from '../runs/setup.js'
import { keyFor, waitingStream } from '../schedules/setup.js'

for (const dialect of dialects()) {
  describe(`operators' resources across workspaces (${dialect})`, () => {
    let app: FastifyInstance
    before(async () => {
      app = await build(dialect, {}, { ownDatabase: true })
    })
    after(() => app.close())

    it('are a 404 to another workspace, which changes nothing', async () => {
      const { streamId } = await waitingStream(app, 'mine', [])
      const schedule = (await send(app, 'POST', `/api/streams/${streamId}/schedules`, { triggerName: 'mine', cron: '0 9 * * 1' })).json()
      const trigger = (await send(app, 'POST', `/api/streams/${streamId}/message-triggers`, { triggerName: 'mine', match: { prefix: '/mine' } })).json()
      const hook = (await send(app, 'POST', `/api/streams/${streamId}/hooks`, { triggerName: 'mine' })).json()
      const [started] = (await send(app, 'POST', `/api/streams/${streamId}/triggers/mine`, {})).json().runs
      const run = await runIn(app, started.id, 'waiting')
      const claim = `/api/runs/${run.id}/phases/${run.phases[0].id}/claim`
      const outsider = await keyFor(app, 'outsider', 'admin', 'elsewhere')
      const calls: Array<[string, string, unknown?]> = [
        ['GET', `/api/streams/${streamId}/schedules`],
        ['POST', `/api/streams/${streamId}/schedules`, { triggerName: 'x', cron: '0 9 * * 1' }],
        ['GET', `/api/schedules/${schedule.id}`],
        ['PATCH', `/api/schedules/${schedule.id}`, { enabled: false }],
        ['DELETE', `/api/schedules/${schedule.id}`],
        ['GET', `/api/streams/${streamId}/message-triggers`],
        ['POST', `/api/streams/${streamId}/message-triggers`, { triggerName: 'x', match: { prefix: '/x' } }],
        ['DELETE', `/api/message-triggers/${trigger.id}`],
        ['GET', `/api/streams/${streamId}/hooks`],
        ['POST', `/api/streams/${streamId}/hooks`, { triggerName: 'x' }],
        ['DELETE', `/api/hooks/${hook.id}`],
        ['POST', claim],
        ['DELETE', claim],
      ]
      for (const [method, url, body] of calls) {
        assert.equal((await send(app, method as 'GET', url, body, outsider)).statusCode, 404, `${method} ${url}`)
      }
      assert.equal((await send(app, 'GET', `/api/me/inbox`, undefined, outsider)).json().data.length, 0)
      assert.equal((await send(app, 'GET', `/api/schedules/${schedule.id}`)).json().enabled, true)
      assert.equal((await send(app, 'GET', `/api/streams/${streamId}/message-triggers`)).json().data.length, 1)
      assert.equal((await send(app, 'GET', `/api/streams/${streamId}/hooks`)).json().data.length, 1)
      assert.equal((await send(app, 'GET', `/api/streams/${streamId}/schedules`)).json().data.length, 1)
      assert.equal((await send(app, 'POST', claim)).statusCode, 200, 'the run is still waiting, and its own workspace may claim it')
    })
  })
}
