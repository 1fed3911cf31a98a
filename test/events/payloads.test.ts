// Every event type's payload is named in the OpenAPI document (under `webhooks`), and the events a real run
// writes validate against those schemas: a client generated from the document reads them as they are.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import Value from 'typebox/value'
import { EVENT_TYPES } from '../../src/events/schemas.js'
import { eventSchema } from '../../src/events/payloads.js'
import { build, dialects, send } from '../helpers.js'
import { startAgentServer, waitFor, type AgentServer } from '../runs/agent-server.js'
import { createAgent, createCycle, createStream, runIn, startRun } from '../runs/setup.js'

const content = (text: string) => ({ content: { blocks: [{ type: 'rich_text', elements: [{ type: 'paragraph', children: [{ type: 'text', text }] }] }] } })

for (const dialect of dialects()) {
  describe(`event payloads (${dialect})`, () => {
    let app: FastifyInstance
    let agent: AgentServer
    before(async () => {
      app = await build(dialect, { TANDEM_WORKERS: '2', TANDEM_PUBLIC_URL: 'http://tandem.test', TANDEM_EGRESS_ALLOW: '127.0.0.0/8' }, { ownDatabase: true })
      agent = await startAgentServer()
    })
    after(async () => {
      await app.close()
      await agent.close()
    })

    it('the OpenAPI document names each event type with its data schema', async () => {
      const document = (await send(app, 'GET', '/openapi.json')).json()
      assert.deepEqual(Object.keys(document.webhooks).sort(), [...EVENT_TYPES].sort())
      const dataOf = (type: string) => {
        const ref: string = document.webhooks[type].post.requestBody.content['application/json'].schema.$ref
        return document.components.schemas[decodeURIComponent(ref.split('/').at(-1)!)].properties.data.$ref
      }
      assert.equal(dataOf('run.updated'), '#/components/schemas/RunSummary')
      assert.equal(dataOf('run.created'), '#/components/schemas/RunSummary')
      assert.equal(dataOf('message.created'), '#/components/schemas/Message')
      assert.equal(dataOf('message.edited'), '#/components/schemas/Message')
      assert.equal(dataOf('cycle.saved'), '#/components/schemas/Cycle')
      assert.equal(dataOf('cycle.updated'), '#/components/schemas/Cycle')
      assert.equal(dataOf('decision.reminder'), '#/components/schemas/InboxItem')
      assert.equal(dataOf('decision.escalated'), '#/components/schemas/EscalatedInboxItem')
    })

    it('every event a run, a message edit and a cycle save write validates against its type', async () => {
      const streamId = await createStream(app)
      // The agent streams its answer (Server-Sent Events): its message ends with message.completed.
      const agentId = await createAgent(app, { endpointUrl: agent.url, capabilities: { streaming: true, tools: [] } })
      agent.answer = () => ({ status: 200, headers: { 'content-type': 'text/event-stream' }, body: 'data: {"delta":"do"}\n\ndata: {"delta":"ne"}\n\ndata: {"output":{"text":"done"}}\n\n' })
      const message = (await send(app, 'POST', `/api/chat/streams/${streamId}/messages`, content('hello'))).json()
      assert.equal((await send(app, 'PATCH', `/api/chat/messages/${message.id}`, content('hello again'), { 'if-match': '"1"' })).statusCode, 200)
      const cycleId = await createCycle(app, streamId, [{ agentId, autoAdvance: false }])
      // Exposing it over A2A (docs/a2a.md) is a cycle.updated.
      assert.equal((await send(app, 'PATCH', `/api/cycles/streams/${streamId}/cycles/${cycleId}`, { a2a: { exposed: true } })).statusCode, 200)
      const run = await startRun(app, streamId, cycleId)
      const waiting = await runIn(app, run.id, 'waiting')
      const decided = await send(app, 'POST', `/api/runs/${run.id}/phases/${waiting.phases[0].id}/decision`, { decision: 'approve', note: 'fine' })
      assert.equal(decided.statusCode, 200, decided.body)
      await runIn(app, run.id, 'succeeded')
      // Decision policies: a pool no one has escalates at once (decision.escalated), a reminder after PT5S.
      const policed = await send(app, 'POST', `/api/cycles/streams/${streamId}/cycles`, {
        triggerName: 'policed', description: 'd', policy: { decision: { remindAfter: 'PT5S' } },
        phasesTemplate: [{ id: '6a1f3c2e-0b7d-4e8f-9a1b-2c3d4e5f6a7b', agentId: '00000000-0000-0000-0000-000000000000', goal: 'g', instructions: 'i', autoAdvance: false, phaseName: 'Sign', operatorPool: ['@nobody'] }],
      })
      assert.equal(policed.statusCode, 201, policed.body)
      const [reminded] = (await send(app, 'POST', `/api/streams/${streamId}/triggers/policed`, {})).json().runs
      await waitFor(async () => ((await send(app, 'GET', `/api/streams/${streamId}/events?limit=100`)).json().data as any[]).some((e) => e.type === 'decision.reminder') || undefined, 15000, 'the reminder')
      assert.equal((await send(app, 'POST', `/api/runs/${reminded.id}/cancel`, {})).statusCode, 200)

      const events = (await send(app, 'GET', `/api/streams/${streamId}/events?limit=100`)).json().data as Array<{ type: (typeof EVENT_TYPES)[number] }>
      // tool_call.* events are checked against their type where a tool loop writes them (test/runs/tool-loop.test.ts).
      const walked = EVENT_TYPES.filter((type) => !type.startsWith('tool_call.'))
      assert.deepEqual([...new Set(events.map((e) => e.type))].sort(), [...walked].sort(), 'the walk-through writes every type')
      for (const event of events) {
        const schema = eventSchema(event.type)
        assert.ok(Value.Check(schema, event), `${event.type}: ${JSON.stringify([...Value.Errors(schema, event)].slice(0, 3))}`)
      }
      const last = (events as any[]).filter((e) => e.type === 'run.updated' && e.data.id === run.id).at(-1) as unknown as { type: string; data: { phases: Array<{ lastDecision: { decision: string } }> } }
      assert.equal(last.type, 'run.updated')
      assert.equal(last.data.phases[0]!.lastDecision.decision, 'approve')
    })
  })
}
