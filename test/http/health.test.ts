// /healthz answers while the process runs; /readyz only while the database answers.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { build, dialects, send } from '../helpers.js'

for (const dialect of dialects()) {
  describe(`health (${dialect})`, () => {
    it('healthz and readyz are 200; readyz turns 503 when the database is gone', async () => {
      const app = await build(dialect)
      try {
        assert.deepEqual((await send(app, 'GET', '/healthz')).json(), { status: 'ok' })
        assert.deepEqual((await send(app, 'GET', '/readyz')).json(), { status: 'ready' })
        await app.database.db.destroy()
        const res = await send(app, 'GET', '/readyz')
        assert.equal(res.statusCode, 503)
        assert.equal(res.json().type, 'urn:tandem:problem:service-unavailable')
        assert.equal((await send(app, 'GET', '/healthz')).statusCode, 200)
      } finally {
        await app.close().catch(() => {})
      }
    })
  })
}
