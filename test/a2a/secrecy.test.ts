// No key or secret of A2A leaves where it belongs: a Tandem calling its own exposed cycle as a remote agent (the
// caller's API key as the agent's credential) and an SDK client calling it with the same key leave the key in no
// log line (at trace level, access log on), no event of either stream, no run, no card and no task.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import type { Task } from '@a2a-js/sdk'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { dialects, freshDatabase, send, TEST_SECRET_KEY, type TestDatabase } from '../helpers.js'
import { startAgentServer, type AgentServer } from '../runs/agent-server.js'
import { createAgent, createCycle, createStream, runIn, startRun } from '../runs/setup.js'
import { expose, keyFor, listen, sdkClient, userMessage } from './setup.js'

for (const dialect of dialects()) {
  describe(`A2A keys stay secret (${dialect})`, () => {
    let app: FastifyInstance
    let database: TestDatabase
    let agent: AgentServer
    const logLines: string[] = []
    before(async () => {
      database = await freshDatabase(dialect, { ownDatabase: true })
      const config = loadConfig({ LOG_LEVEL: 'trace', TANDEM_AUTH: 'local', TANDEM_SECRET_KEY: TEST_SECRET_KEY, TANDEM_WORKERS: '4', DATABASE_URL: database.url, TANDEM_ACCESS_LOG: 'on', TANDEM_EGRESS_ALLOW: '127.0.0.0/8', TANDEM_POLL_INTERVAL_MS: '50' })
      app = await buildApp(config, { connect: { schema: database.schema, poolSize: 4 }, logStream: { write: (line: string) => void logLines.push(line) } })
      await app.ready()
      agent = await startAgentServer()
    })
    after(async () => {
      await app.close()
      await agent.close()
      await database.drop()
    })

    it('the caller\'s key is in no log line, event, run, card or task', async () => {
      const base = await listen(app)
      const key = await keyFor(app, 'otto')
      const inner = await createStream(app, 'Inner')
      const worker = await createAgent(app, { endpointUrl: agent.url })
      const exposed = await createCycle(app, inner, [{ agentId: worker, name: 'Work' }], 'work')
      await expose(app, inner, exposed)
      const client = await sdkClient(base, exposed, key)
      const task = (await client.sendMessage({ tenant: '', message: userMessage('by hand'), configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: false }, metadata: undefined })) as Task

      const credentialId = (await send(app, 'POST', '/api/credentials', { name: 'own key', secret: key })).json().id
      const remote = await createAgent(app, { name: 'Self', providerType: 'custom_webhook', endpointUrl: `${base}/a2a/cycles/${exposed}/.well-known/agent-card.json`, authMode: 'api_key', credentialId, config: { protocol: 'a2a' } })
      const outer = await createStream(app, 'Outer')
      const run = await startRun(app, outer, await createCycle(app, outer, [{ agentId: remote, name: 'Delegate' }], 'delegate'))
      const done = await runIn(app, run.id, ['succeeded', 'failed'], 20000)
      assert.equal(done.status, 'succeeded', JSON.stringify(done.phases[0].error))

      const seen = [
        ...logLines,
        (await send(app, 'GET', `/api/streams/${inner}/events?after=0&limit=100`, undefined, { accept: 'application/json' })).body,
        (await send(app, 'GET', `/api/streams/${outer}/events?after=0&limit=100`, undefined, { accept: 'application/json' })).body,
        (await send(app, 'GET', `/api/runs/${run.id}`)).body,
        (await send(app, 'GET', `/api/runs/${task.id}`)).body,
        await (await fetch(`${base}/a2a/cycles/${exposed}/.well-known/agent-card.json`)).text(),
        JSON.stringify(await client.getTask({ tenant: '', id: task.id })),
      ]
      assert.ok(logLines.length > 0)
      for (const text of seen) assert.ok(!text.includes(key), `the key leaked: ${text.slice(0, 300)}`)
    })
  })
}
