// A trigger's fan-out is bounded: one call starts at most 20 runs; with 21 matching cycles it
// starts none and answers 409 too-many-runs. Cycles are chosen in SQL, case-insensitively (Unicode too), and
// the answer carries each run's id and status, not the whole run.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { createAgent, createCycle, createStream } from './setup.js'

for (const dialect of dialects()) {
  describe(`trigger fan-out (${dialect})`, () => {
    let app: FastifyInstance
    let agentId: string
    before(async () => {
      app = await build(dialect, { TANDEM_WORKERS: '0' })
      agentId = await createAgent(app, { endpointUrl: 'http://127.0.0.1:9/never' })
    })
    after(async () => app.close())

    const runsOf = async (streamId: string) => (await send(app, 'GET', `/api/cycles/streams/${streamId}/runs?limit=100`)).json().data as unknown[]

    it('20 matching cycles: 20 runs, as ids and statuses', async () => {
      const streamId = await createStream(app, 'Twenty')
      for (let i = 0; i < 20; i++) await createCycle(app, streamId, [{ agentId }], i % 2 === 0 ? 'Boom' : 'boom')
      await createCycle(app, streamId, [{ agentId }], 'other')
      const res = await send(app, 'POST', `/api/streams/${streamId}/triggers/BOOM`, { input: {} })
      assert.equal(res.statusCode, 202, res.body)
      const { runs } = res.json() as { runs: Array<Record<string, unknown>> }
      assert.equal(runs.length, 20)
      for (const run of runs) assert.deepEqual(Object.keys(run).sort(), ['id', 'status'])
      assert.equal((await runsOf(streamId)).length, 20)
    })

    it('21 matching cycles: 409 too-many-runs and no run at all', async () => {
      const streamId = await createStream(app, 'Twenty-one')
      for (let i = 0; i < 21; i++) await createCycle(app, streamId, [{ agentId }], 'boom')
      const res = await send(app, 'POST', `/api/streams/${streamId}/triggers/boom`, { input: {} })
      assert.equal(res.statusCode, 409, res.body)
      assert.equal(res.json().type, 'urn:tandem:problem:too-many-runs')
      assert.match(res.json().detail, /at most 20/)
      assert.equal((await runsOf(streamId)).length, 0)
    })

    it('compares names as toLowerCase() does, beyond ASCII', async () => {
      const streamId = await createStream(app, 'Unicode')
      await createCycle(app, streamId, [{ agentId }], 'ÉTÉ-Neu')
      const res = await send(app, 'POST', `/api/streams/${streamId}/triggers/${encodeURIComponent('été-neu')}`, { input: {} })
      assert.equal(res.statusCode, 202, res.body)
      assert.equal(res.json().runs.length, 1)
      const none = await send(app, 'POST', `/api/streams/${streamId}/triggers/nothing`, { input: {} })
      assert.deepEqual(none.json(), { runs: [] })
    })
  })
}
