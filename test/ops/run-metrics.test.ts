// The run engine's series in /metrics: runs by final status and tasks waiting (from the database), task deliveries
// by provider and outcome with their duration, and open SSE connections.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { startAgentServer, type AgentServer } from '../runs/agent-server.js'
import { createAgent, createCycle, createStream, runIn, startRun } from '../runs/setup.js'
import { waitFor } from '../wait.js'

const value = (body: string, series: string) => Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(body)?.[1] ?? 'NaN')

for (const dialect of dialects()) {
  describe(`run metrics (${dialect})`, () => {
    let app: FastifyInstance
    let agent: AgentServer
    before(async () => {
      app = await build(dialect, { TANDEM_WORKERS: '2', TANDEM_EGRESS_ALLOW: '127.0.0.0/8' }, { ownDatabase: true })
      agent = await startAgentServer()
    })
    after(async () => {
      await app.close()
      await agent.close()
    })

    it('counts runs by final status, deliveries by provider and outcome, and open event streams', async () => {
      const agentId = await createAgent(app, { endpointUrl: agent.url })
      const streamId = await createStream(app)
      const cycleId = await createCycle(app, streamId, [{ agentId, autoAdvance: true, name: 'Triage' }])
      for (let i = 0; i < 2; i++) await runIn(app, (await startRun(app, streamId, cycleId)).id, 'succeeded')
      const base = await app.listen({ port: 0, host: '127.0.0.1' })
      const controller = new AbortController()
      const events = await fetch(`${base}/api/streams/${streamId}/events`, { headers: { accept: 'text/event-stream' }, signal: controller.signal })
      assert.equal(events.status, 200)
      const body = (await send(app, 'GET', '/metrics')).body
      assert.equal(value(body, 'tandem_runs_total{status="succeeded"}'), 2)
      assert.equal(value(body, 'tandem_tasks_total{provider="custom_webhook",outcome="answered"}'), 2)
      assert.equal(value(body, 'tandem_task_delivery_duration_seconds_count{provider="custom_webhook"}'), 2)
      assert.equal(value(body, 'tandem_tasks_waiting'), 0)
      assert.equal(value(body, 'tandem_sse_clients'), 1)
      controller.abort()
      await waitFor(async () => value((await send(app, 'GET', '/metrics')).body, 'tandem_sse_clients') === 0, { what: 'the closed stream to leave tandem_sse_clients' })
    })
  })
}
