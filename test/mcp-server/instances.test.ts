// PostgreSQL with two instances on one database: a session opened on one is served by the other (the session
// lives in the database), a subscription made through one is notified on the other's GET stream when a third
// party changes the run through the first, and a session ended on one is a 404 on the other.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { dialects, freshDatabase, send, TEST_SECRET_KEY, type TestDatabase } from '../helpers.js'
import { keyFor, waitingStream } from '../schedules/setup.js'
import { runIn } from '../runs/setup.js'
import { waitFor } from '../runs/agent-server.js'
import { call, connect, listen } from './setup.js'

if (dialects().includes('postgres')) {
  describe('MCP server: two instances (postgres)', () => {
    let database: TestDatabase
    let one: FastifyInstance
    let two: FastifyInstance
    const instance = () => buildApp(loadConfig({ LOG_LEVEL: 'silent', TANDEM_WORKERS: '0', TANDEM_SECRET_KEY: TEST_SECRET_KEY, DATABASE_URL: database.url }), { connect: { schema: database.schema, poolSize: 4 } })

    before(async () => {
      database = await freshDatabase('postgres')
      one = await instance()
      two = await instance()
    })
    after(async () => {
      await one.close()
      await two.close()
      await database.drop()
    })

    it('a session carried across instances: calls, a subscription notified on the other instance, its end', async () => {
      const [baseOne, baseTwo] = [await listen(one), await listen(two)]
      const maria = await keyFor(one, 'maria', 'member')
      const { streamId } = await waitingStream(one, 'across', ['@maria'])
      const [started] = (await send(one, 'POST', `/api/streams/${streamId}/triggers/across`, {})).json().runs
      const run = await runIn(one, started.id, 'waiting')

      const first = await connect(baseOne, maria)
      const sessionId = first.transport.sessionId!
      assert.ok(sessionId)
      // The same session on the other instance: no initialize, its id carried over.
      const second = await connect(baseTwo, maria, sessionId)
      assert.equal(second.transport.sessionId, sessionId)
      const updated: string[] = []
      second.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri))
      // The other instance's GET stream (opened on connect) reads the subscription made through the first.
      await second.transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
      await Promise.race([second.streamOpen, new Promise((_, reject) => setTimeout(() => reject(new Error('the other instance\'s event stream did not open within 5 s')), 5000).unref())])
      const uri = `tandem://runs/${run.id}`
      await first.client.subscribeResource({ uri })
      const inbox = await call(second.client, 'list_inbox', {})
      assert.deepEqual(inbox.structured.data.map((i: any) => i.runId), [run.id])
      const decided = await call(first.client, 'decide_phase', { runId: run.id, phaseRunId: run.phases[0].id, decision: 'approve' })
      assert.equal(decided.isError, false, decided.sentence)
      await waitFor(async () => updated.includes(uri) || undefined, 5000, 'the notification on the other instance')

      await first.transport.terminateSession()
      const after = await fetch(`${baseTwo}/mcp`, { method: 'POST', headers: { ...maria, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId }, body: '{"jsonrpc":"2.0","id":9,"method":"tools/list"}' })
      assert.equal(after.status, 404)
      await second.client.close().catch(() => {})
      await first.client.close().catch(() => {})
    })
  })
}
