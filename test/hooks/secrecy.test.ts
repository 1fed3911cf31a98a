// An inbound hook's secret is shown once, at creation: no other response, no log line (at trace level), no
// event of the stream and no stored idempotent answer holds it, whatever calls the hook gets.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { Webhook } from 'standardwebhooks'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { dialects, freshDatabase, send, TEST_SECRET_KEY, type TestDatabase } from '../helpers.js'
import { waitingStream } from '../schedules/setup.js'

for (const dialect of dialects()) {
  describe(`an inbound hook's secret stays on the server (${dialect})`, () => {
    let app: FastifyInstance
    let database: TestDatabase
    const logLines: string[] = []
    before(async () => {
      database = await freshDatabase(dialect)
      const config = loadConfig({ LOG_LEVEL: 'trace', TANDEM_AUTH: 'local', TANDEM_SECRET_KEY: TEST_SECRET_KEY, TANDEM_WORKERS: '0', DATABASE_URL: database.url, TANDEM_ACCESS_LOG: 'on' })
      app = await buildApp(config, { connect: { schema: database.schema, poolSize: 4 }, logStream: { write: (line: string) => void logLines.push(line) } })
      await app.ready()
    })
    after(async () => {
      await app.close()
      await database.drop()
    })

    it('appears only in the answer that creates the hook', async () => {
      const { streamId } = await waitingStream(app, 'secret')
      const created = await send(app, 'POST', `/api/streams/${streamId}/hooks`, { triggerName: 'secret' }, { 'idempotency-key': 'k1' })
      assert.equal(created.statusCode, 201)
      const { id, secret } = created.json() as { id: string; secret: string }
      const key = secret.slice('whsec_'.length)
      const answers: string[] = []
      const body = '{"x":1}'
      const at = new Date()
      for (const headers of [
        { 'webhook-id': 'a', 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': new Webhook(secret).sign('a', at, body) },
        { 'webhook-id': 'a', 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': new Webhook(secret).sign('a', at, body) },
        { 'webhook-id': 'b', 'webhook-timestamp': '1', 'webhook-signature': 'v1,AAAA' },
        {},
      ]) {
        answers.push((await app.inject({ method: 'POST', url: `/hooks/${id}`, payload: body, headers: { 'content-type': 'application/json', ...headers } })).body)
      }
      answers.push((await send(app, 'GET', `/api/streams/${streamId}/hooks`)).body)
      answers.push((await send(app, 'GET', `/api/streams/${streamId}/events`, undefined, { accept: 'application/json' })).body)
      for (const answer of answers) assert.ok(!answer.includes(key), `no secret in ${answer.slice(0, 80)}`)
      assert.ok(logLines.length > 0)
      for (const line of logLines) assert.ok(!line.includes(key), 'no secret in the logs')
      const stored = await app.database.db.selectFrom('idempotency_requests').selectAll().execute()
      for (const row of stored) assert.ok(!JSON.stringify(row).includes(key), 'no secret in stored idempotent answers')
    })
  })
}
