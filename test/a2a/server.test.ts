// An exposed cycle driven through the official A2A SDK's client against a listening Tandem on loopback, on both
// databases: exposure and its bounds, the public card, SendMessage (blocking and not), the state mapping
// (COMPLETED with an artifact per output, AUTH_REQUIRED naming who and by when, CANCELED), GetTask with
// historyLength, ListTasks, CancelTask, streams and SubscribeToTask, and the protocol's errors.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { TaskState, type StreamResponse, type Task } from '@a2a-js/sdk'
import type { Client } from '@a2a-js/sdk/client'
import { build, dialects, pointers, send } from '../helpers.js'
import { startAgentServer, type AgentServer } from '../runs/agent-server.js'
import { NIL, createAgent, createCycle, createStream, runIn } from '../runs/setup.js'
import { expose, keyFor, listen, rpc, sdkClient, userMessage } from './setup.js'
import { bearer, createKey } from '../auth.js'

const send1 = (text: string, configuration: Record<string, unknown> = {}, extra = {}) =>
  ({ tenant: '', message: userMessage(text, extra), configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: false, ...configuration }, metadata: undefined }) as never

async function collect(events: AsyncGenerator<StreamResponse>): Promise<StreamResponse[]> {
  const out: StreamResponse[] = []
  for await (const event of events) out.push(event)
  return out
}

for (const dialect of dialects()) {
  describe(`A2A server through the SDK's client (${dialect})`, () => {
    let app: FastifyInstance
    let agent: AgentServer
    let base: string
    let streamId: string
    let agentCycle: string
    let peopleCycle: string
    let hiddenCycle: string
    let mariaKey: string
    let ottoKey: string
    let client: Client
    let peopleClient: Client

    before(async () => {
      app = await build(dialect, { TANDEM_WORKERS: '4', TANDEM_EGRESS_ALLOW: '127.0.0.0/8', TANDEM_A2A_WAIT_S: '20' }, { ownDatabase: true })
      agent = await startAgentServer()
      const agentId = await createAgent(app, { endpointUrl: agent.url })
      streamId = await createStream(app)
      agentCycle = await createCycle(app, streamId, [{ agentId, autoAdvance: true, name: 'Triage' }], 'triage')
      peopleCycle = await createCycle(app, streamId, [{ agentId: NIL, operatorPool: ['@Maria'], name: 'Review' }], 'review')
      hiddenCycle = await createCycle(app, streamId, [{ agentId: NIL, name: 'Hidden' }], 'hidden')
      mariaKey = await keyFor(app, 'maria')
      ottoKey = await keyFor(app, 'otto')
      base = await listen(app)
      await expose(app, streamId, agentCycle, { exposed: true, skill: { tags: ['support'], examples: ['My printer is on fire'] } })
      await expose(app, streamId, peopleCycle)
      client = await sdkClient(base, agentCycle, ottoKey)
      peopleClient = await sdkClient(base, peopleCycle, ottoKey)
    })
    after(async () => {
      await app.close()
      await agent.close()
    })

    it('exposes a cycle with PATCH (cycle.updated), bounds its skill with pointers, and lists exposed cycles', async () => {
      const read = (await send(app, 'GET', `/api/cycles/streams/${streamId}/cycles/${hiddenCycle}`)).json()
      assert.equal(read.a2a, null)
      const bad = await send(app, 'PATCH', `/api/cycles/streams/${streamId}/cycles/${hiddenCycle}`, {
        a2a: { exposed: true, skill: { id: 'no spaces', name: '', tags: Array(21).fill('t'), examples: ['x'.repeat(501)] } },
      })
      assert.equal(bad.statusCode, 400, bad.body)
      assert.ok(pointers(bad).some((p) => p.startsWith('/a2a/skill/')), bad.body)
      assert.equal((await send(app, 'GET', `/api/cycles/streams/${streamId}/cycles/${hiddenCycle}`)).json().a2a, null, 'nothing changed')
      const events = (await send(app, 'GET', `/api/streams/${streamId}/events?after=0&limit=100`, undefined, { accept: 'application/json' })).json()
      const updated = (events.data as any[]).filter((e: any) => e.type === 'cycle.updated')
      assert.ok(updated.some((e: any) => e.data.id === agentCycle && e.data.a2a.exposed === true))
      const agents = (await send(app, 'GET', '/api/a2a/agents')).json()
      assert.deepEqual(agents.data.map((a: any) => a.cycleId).sort(), [agentCycle, peopleCycle].sort())
      assert.equal(agents.data.find((a: any) => a.cycleId === agentCycle).cardUrl, `${base}/a2a/cycles/${agentCycle}/.well-known/agent-card.json`)
    })

    it('serves the public card (no key, cached with an ETag); an unexposed or unknown cycle is 404', async () => {
      const res = await fetch(`${base}/a2a/cycles/${agentCycle}/.well-known/agent-card.json`)
      assert.equal(res.status, 200)
      assert.equal(res.headers.get('cache-control'), 'max-age=60')
      const etag = res.headers.get('etag')
      assert.ok(etag)
      const card = (await res.json()) as any
      assert.equal(card.name, 'triage')
      assert.deepEqual(card.supportedInterfaces, [{ url: `${base}/a2a/cycles/${agentCycle}`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }])
      assert.deepEqual(card.skills, [{ id: agentCycle, name: 'triage', description: 'Handle a ticket', tags: ['support'], examples: ['My printer is on fire'] }])
      assert.deepEqual(card.securitySchemes, { tandemApiKey: { httpAuthSecurityScheme: { scheme: 'Bearer' } } })
      assert.equal((await fetch(`${base}/a2a/cycles/${agentCycle}/.well-known/agent-card.json`, { headers: { 'if-none-match': etag } })).status, 304)
      assert.equal((await fetch(`${base}/a2a/cycles/${hiddenCycle}/.well-known/agent-card.json`)).status, 404)
      assert.equal((await fetch(`${base}/a2a/cycles/0190a000-0000-7000-8000-000000000000/.well-known/agent-card.json`)).status, 404)
    })

    it('SendMessage runs the cycle: the task is the run, its context the stream, COMPLETED with the output as an artifact', async () => {
      const task = (await client.sendMessage(send1('The printer is on fire'))) as Task
      assert.equal(task.contextId, streamId)
      assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED)
      assert.equal(task.artifacts.length, 1)
      const [artifact] = task.artifacts
      assert.equal(artifact?.name, 'Triage')
      assert.equal(artifact?.parts[0]?.content?.$case === 'text' && artifact.parts[0].content.value, 'done: Triage #1')
      assert.equal(artifact?.metadata?.tandem.kind, 'output')
      const run = (await send(app, 'GET', `/api/runs/${task.id}`)).json()
      assert.deepEqual(run.trigger.kind, 'a2a')
      assert.equal(run.input.message.text, 'The printer is on fire')
      const posted = (await send(app, 'GET', `/api/chat/messages/${run.input.message.id}`)).json()
      assert.equal(posted.text, 'The printer is on fire')
      const history = task.history.map((m) => m.role)
      assert.deepEqual(history.slice(0, 1), [1])
      const none = await client.getTask({ tenant: '', id: task.id, historyLength: 0 })
      assert.deepEqual(none.history, [])
    })

    it('a gate is AUTH_REQUIRED naming who must decide; GetTask, ListTasks and CancelTask (then -32002)', async () => {
      const task = (await peopleClient.sendMessage(send1('Please review'))) as Task
      assert.equal(task.status?.state, TaskState.TASK_STATE_AUTH_REQUIRED)
      const status = task.status?.message
      assert.equal(status?.parts[0]?.content?.$case === 'text' && status.parts[0].content.value, 'Waiting for @maria to decide "Review".')
      assert.equal(status?.metadata?.tandem.waitingFor, 'decision')
      assert.deepEqual(status?.metadata?.tandem.operators, ['maria'])
      const again = await peopleClient.getTask({ tenant: '', id: task.id })
      assert.equal(again.status?.state, TaskState.TASK_STATE_AUTH_REQUIRED)
      const listed = await peopleClient.listTasks({ tenant: '', contextId: '', status: 0, pageToken: '', statusTimestampAfter: undefined, pageSize: 10 } as never)
      assert.ok(listed.tasks.some((t) => t.id === task.id))
      const canceled = await peopleClient.cancelTask({ tenant: '', id: task.id, metadata: undefined })
      assert.equal(canceled.status?.state, TaskState.TASK_STATE_CANCELED)
      const refused = await rpc(base, peopleCycle, 'CancelTask', { id: task.id }, bearer(ottoKey))
      assert.equal(refused.body.error.code, -32002)
      const ended = await rpc(base, peopleCycle, 'SendMessage', { message: { messageId: 'm2', role: 'ROLE_USER', taskId: task.id, parts: [{ text: 'hello?' }] } }, bearer(ottoKey))
      assert.equal(ended.body.error.code, -32004)
    })

    it('streams a new task: SUBMITTED first, the artifact, then COMPLETED, and closes', async () => {
      const events = await collect(client.sendMessageStream(send1('Stream it')))
      assert.equal(events[0]?.payload?.$case, 'task')
      assert.equal(events[0]?.payload?.$case === 'task' && events[0].payload.value.status?.state, TaskState.TASK_STATE_SUBMITTED)
      const artifacts = events.filter((e) => e.payload?.$case === 'artifactUpdate')
      assert.equal(artifacts.length, 1)
      assert.equal(artifacts[0]?.payload?.$case === 'artifactUpdate' && artifacts[0].payload.value.lastChunk, true)
      const last = events.at(-1)
      assert.equal(last?.payload?.$case === 'statusUpdate' && last.payload.value.status?.state, TaskState.TASK_STATE_COMPLETED)
    })

    it('streams a streaming agent\'s deltas as artifact chunks (append after the first), then the whole message', async () => {
      let open!: () => void
      const opened = new Promise<void>((resolve) => (open = resolve))
      const streaming = await startAgentServer(async () => {
        await opened
        const frames = ['Hel', 'lo, ', 'world'].map((delta) => `data: ${JSON.stringify({ delta })}\n\n`).join('')
        return { status: 200, headers: { 'content-type': 'text/event-stream' }, body: `${frames}data: ${JSON.stringify({ output: { text: 'Hello, world' } })}\n\n` }
      })
      try {
        const agentId = await createAgent(app, { name: 'Streamer', endpointUrl: streaming.url, capabilities: { streaming: true } })
        const cycleId = await createCycle(app, streamId, [{ agentId, autoAdvance: true, name: 'Write' }], 'write')
        await expose(app, streamId, cycleId)
        const writer = await sdkClient(base, cycleId, ottoKey)
        const events: StreamResponse[] = []
        for await (const event of writer.sendMessageStream(send1('Write it'))) {
          events.push(event)
          if (events.length === 1) open()
        }
        const chunks = events.flatMap((e) => (e.payload?.$case === 'artifactUpdate' ? [e.payload.value] : []))
        const interim = chunks.filter((c) => !c.lastChunk)
        assert.ok(interim.length >= 1, 'the deltas come as chunks')
        assert.equal(interim[0]?.append, false)
        assert.ok(interim.slice(1).every((c) => c.append))
        const text = (c: (typeof chunks)[number]) => (c.artifact?.parts[0]?.content?.$case === 'text' ? c.artifact.parts[0].content.value : '')
        assert.equal(interim.map(text).join(''), 'Hello, world')
        const whole = chunks.at(-1)
        assert.deepEqual([whole?.lastChunk, whole?.append, whole && text(whole)], [true, false, 'Hello, world'])
        assert.equal(new Set(chunks.map((c) => c.artifact?.artifactId)).size, 1, 'one artifact: the message')
      } finally {
        await streaming.close()
      }
    })

    it('SubscribeToTask follows a waiting task through its decision to COMPLETED', async () => {
      const task = (await peopleClient.sendMessage(send1('Review this', { returnImmediately: true }))) as Task
      const waiting = await runIn(app, task.id, 'waiting')
      const events = peopleClient.resubscribeTask({ tenant: '', id: task.id })
      const first = await events.next()
      assert.equal(!first.done && first.value.payload?.$case === 'task' && first.value.payload.value.status?.state, TaskState.TASK_STATE_AUTH_REQUIRED)
      const decided = await send(app, 'POST', `/api/runs/${task.id}/phases/${waiting.phases[0].id}/decision`, { decision: 'approve' }, bearer(mariaKey))
      assert.equal(decided.statusCode, 200, decided.body)
      const rest: StreamResponse[] = []
      for await (const event of events) rest.push(event)
      const last = rest.at(-1)
      assert.equal(last?.payload?.$case === 'statusUpdate' && last.payload.value.status?.state, TaskState.TASK_STATE_COMPLETED)
      const ended = await rpc(base, peopleCycle, 'SubscribeToTask', { id: task.id }, bearer(ottoKey))
      assert.equal(ended.body.error.code, -32004)
    })

    it('answers the protocol\'s errors: 401 for a bad key, version, unknown task, file parts, foreign context, bounds, unknown method', async () => {
      const keyed = bearer(ottoKey)
      const noKey = await fetch(`${base}/a2a/cycles/${agentCycle}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer not-a-key' }, body: '{}' })
      assert.equal(noKey.status, 401)
      assert.match(noKey.headers.get('www-authenticate') ?? '', /^Bearer/)
      const hidden = await rpc(base, hiddenCycle, 'GetTask', { id: agentCycle }, keyed)
      assert.equal(hidden.status, 404)
      const noVersion = await rpc(base, agentCycle, 'GetTask', { id: agentCycle }, { ...keyed, 'a2a-version': '0.3' })
      assert.equal(noVersion.body.error.code, -32009)
      assert.equal((await rpc(base, agentCycle, 'GetTask', { id: agentCycle }, keyed)).body.error.code, -32001)
      const message = (parts: unknown[], extra = {}) => ({ message: { messageId: 'x', role: 'ROLE_USER', parts, ...extra } })
      assert.equal((await rpc(base, agentCycle, 'SendMessage', message([{ url: 'https://example.com/a.pdf' }]), keyed)).body.error.code, -32005)
      assert.equal((await rpc(base, agentCycle, 'SendMessage', message([]), keyed)).body.error.code, -32602)
      assert.equal((await rpc(base, agentCycle, 'SendMessage', message([{ text: 'x'.repeat(40001) }]), keyed)).body.error.code, -32602)
      assert.equal((await rpc(base, agentCycle, 'SendMessage', message([{ text: 'hi' }], { contextId: agentCycle }), keyed)).body.error.code, -32602)
      assert.equal((await rpc(base, agentCycle, 'GetTask', { id: agentCycle, historyLength: 101 }, keyed)).body.error.code, -32602)
      assert.equal((await rpc(base, agentCycle, 'NoSuchMethod', {}, keyed)).body.error.code, -32601)
      const notJson = await fetch(`${base}/a2a/cycles/${agentCycle}`, { method: 'POST', headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...keyed }, body: '{"jsonrpc":' })
      assert.equal(((await notJson.json()) as any).error.code, -32700)
      const foreign = await rpc(base, agentCycle, 'GetTask', { id: agentCycle }, { ...keyed, origin: 'https://elsewhere.example' })
      assert.equal(foreign.status, 403)
      const workspaceId = (await send(app, 'GET', '/api/me')).json().workspaceId
      const agentKey = (await createKey(app, { workspaceId, name: 'a bot', agentId: (await send(app, 'GET', '/api/agents')).json().data[0].id })).key
      assert.equal((await rpc(base, agentCycle, 'GetTask', { id: agentCycle }, bearer(agentKey))).status, 403)
      assert.equal((await rpc(base, agentCycle, 'GetExtendedAgentCard', {}, keyed)).body.error.code, -32004)
      // Another cycle's task reads as unknown.
      const task = (await client.sendMessage(send1('mine', { returnImmediately: true }))) as Task
      assert.equal((await rpc(base, peopleCycle, 'GetTask', { id: task.id }, keyed)).body.error.code, -32001)
    })
  })
}
