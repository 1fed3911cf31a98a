// A phase done by a remote A2A agent whose card says it streams, on both databases, against an agent built with
// the official SDK on loopback: the task goes as one SendStreamingMessage and the remote's artifact chunks go into
// the phase's message as deltas; a stream cut mid-task goes on with SubscribeToTask and the message is never sent
// again; an INPUT_REQUIRED in the stream is the inbox question and its answer goes back on the same task; a card
// that does not stream is polled as before; a stream still open at the dispatch time-out is subscribed again (the
// bound on its bytes: client-stream-bounds.test.ts).
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { openEventStream, type SseMessage, type SseStream } from '../events/sse-client.js'
import { waitFor } from '../runs/agent-server.js'
import { createAgent, createCycle, createStream, runIn, startRun } from '../runs/setup.js'
import { startRemoteAgent, type RemoteAgent } from './remote-agent.js'

const parsed = (m: SseMessage) => JSON.parse(m.data as string)

/** Applies the deltas as a client would: text = text.slice(0, offset) + delta. */
function applyDeltas(deltas: SseMessage[]): string {
  let text = ''
  for (const frame of deltas) {
    const d = parsed(frame)
    text = text.slice(0, d.offset) + d.text
  }
  return text
}

for (const dialect of dialects()) {
  describe(`A2A client against a streaming SDK-built remote agent (${dialect})`, () => {
    let app: FastifyInstance
    let base: string
    let remote: RemoteAgent
    let credentialId: string

    before(async () => {
      app = await build(dialect, { TANDEM_WORKERS: '4', TANDEM_EGRESS_ALLOW: '127.0.0.0/8', TANDEM_POLL_INTERVAL_MS: '50', TANDEM_DISPATCH_TIMEOUT_MS: '5000', TANDEM_DISPATCH_ATTEMPTS: '2' }, { ownDatabase: true })
      await app.listen({ port: 0, host: '127.0.0.1' })
      base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
      remote = await startRemoteAgent('stream', { streaming: true })
      credentialId = (await send(app, 'POST', '/api/credentials', { name: 'remote key', secret: 'remote-secret-123' })).json().id
    })
    after(async () => {
      await app.close()
      await remote.close()
    })

    /** A stream of its own (its events followed), and a one-phase cycle of a remote agent that streams into the chat. */
    async function setUp(name: string) {
      const streamId = await createStream(app, `${name}-${Math.random()}`)
      const events = await openEventStream(`${base}/api/streams/${streamId}/events`)
      const agentId = await createAgent(app, { name, providerType: 'custom_webhook', endpointUrl: remote.cardUrl, authMode: 'api_key', credentialId, config: { protocol: 'a2a' }, capabilities: { streaming: true, tools: [] } })
      const cycleId = await createCycle(app, streamId, [{ agentId, autoAdvance: true, name }], name)
      return { streamId, events, cycleId }
    }
    const sentFor = (runId: string) => remote.received.filter((m) => m.parts?.[1]?.data?.tandem?.run?.id === runId)
    const callsFor = (method: string, messageId: string) => remote.calls.filter((c) => c.method === method && c.params?.message?.messageId === messageId)
    const deltasIn = (events: SseStream) => events.messages.filter((m) => m.event === 'message.delta')

    it('sends one SendStreamingMessage; the artifact\'s chunks go into the phase\'s message as deltas, and the whole is the output', async () => {
      remote.behaviour = 'stream'
      const { streamId, events, cycleId } = await setUp('Streamed')
      const run = await startRun(app, streamId, cycleId)
      // The first chunks are in the chat while the remote still works.
      await waitFor(() => applyDeltas(deltasIn(events)) === 'Hello world' || undefined, 10000, 'the streamed chunks')
      // A delta may come before the message.created it belongs to (the event is stored, the delta is not).
      const created = await waitFor(() => events.messages.find((m) => m.event === 'message.created'), 10000, 'message.created')
      assert.equal(parsed(created).data.status, 'streaming')
      remote.finish('!')
      const done = await runIn(app, run.id, ['succeeded', 'failed'])
      assert.equal(done.status, 'succeeded', JSON.stringify(done.phases[0].error))
      assert.equal(done.phases[0].output.text, 'Hello world!')
      const completed = await waitFor(() => events.messages.find((m) => m.event === 'message.completed'), 10000, 'message.completed')
      events.close()
      assert.equal(parsed(completed).data.id, parsed(created).data.id, 'one message, completed')
      assert.equal(parsed(completed).data.text, 'Hello world!')
      assert.equal(done.phases[0].output.messageId, parsed(created).data.id, 'the phase took the streamed message')
      assert.equal(applyDeltas(deltasIn(events)), 'Hello world!')
      const [message] = sentFor(run.id)
      assert.equal(sentFor(run.id).length, 1)
      assert.equal(callsFor('SendStreamingMessage', message!.messageId).length, 1)
      assert.equal(callsFor('SendMessage', message!.messageId).length, 0)
      assert.ok(remote.authorizations.every((a) => a === 'Bearer remote-secret-123'), 'the key on every call, the card included')
    })

    it('a stream cut mid-task goes on with SubscribeToTask; the message is sent exactly once', async () => {
      remote.behaviour = 'stream'
      // The task, its WORKING and the first chunk, then the connection drops; the remote goes on with the task.
      remote.dropStreamAfter = 3
      const { streamId, events, cycleId } = await setUp('Dropped')
      const run = await startRun(app, streamId, cycleId)
      await waitFor(() => sentFor(run.id).length === 1 || undefined, 10000, 'the message')
      const remoteTaskId = await waitFor(() => remote.calls.find((c) => c.method === 'SubscribeToTask')?.params.id, 10000, 'a subscription')
      // The resumed stream restarts the message from the text so far (a reset): by then the remote's subscription is
      // attached to its task, so what finish() publishes reaches it.
      await waitFor(() => deltasIn(events).some((d) => parsed(d).reset === true && parsed(d).text === 'Hello world') || undefined, 10000, 'the chunks so far, again')
      remote.finish(' again')
      const done = await runIn(app, run.id, ['succeeded', 'failed'])
      assert.equal(done.status, 'succeeded', JSON.stringify(done.phases[0].error))
      assert.equal(done.phases[0].output.text, 'Hello world again')
      const completed = await waitFor(() => events.messages.find((m) => m.event === 'message.completed'), 10000, 'message.completed')
      events.close()
      assert.equal(parsed(completed).data.text, 'Hello world again')
      assert.equal(applyDeltas(deltasIn(events)), 'Hello world again')
      const messageId = sentFor(run.id)[0]!.messageId
      const sends = remote.calls.filter((c) => (c.method === 'SendMessage' || c.method === 'SendStreamingMessage') && c.params.message.messageId === messageId)
      assert.equal(sends.length, 1, 'sent exactly once')
      assert.ok(remote.calls.filter((c) => c.method === 'SubscribeToTask' && c.params.id === remoteTaskId).length >= 1)
    })

    it('an INPUT_REQUIRED in the stream is the inbox question; the answer goes back on the same task', async () => {
      remote.behaviour = 'ask'
      const { streamId, events, cycleId } = await setUp('Asked')
      events.close()
      const run = await startRun(app, streamId, cycleId)
      const waiting = await runIn(app, run.id, 'waiting')
      assert.equal(waiting.phases[0].status, 'awaiting_input')
      const inbox = (await send(app, 'GET', '/api/me/inbox')).json().data
      assert.ok(inbox.some((item: any) => item.kind === 'question' && item.summary === 'Which year?'), JSON.stringify(inbox))
      const first = sentFor(run.id)[0]!
      assert.equal(callsFor('SendStreamingMessage', first.messageId).length, 1)
      const answered = await send(app, 'POST', `/api/runs/${run.id}/phases/${waiting.phases[0].id}/answer`, { text: '1969' })
      assert.equal(answered.statusCode, 200, answered.body)
      const done = await runIn(app, run.id, ['succeeded', 'failed'])
      assert.equal(done.status, 'succeeded', JSON.stringify(done.phases[0].error))
      assert.equal(done.phases[0].output.text, 'answer was: 1969')
      const replies = remote.received.filter((m) => typeof m.messageId === 'string' && m.messageId.startsWith(`${first.messageId}:`))
      assert.equal(replies.length, 1, 'the answer is sent once')
      const asked = remote.calls.find((c) => c.method === 'SendStreamingMessage' && c.params.message.messageId === first.messageId)!
      assert.ok(asked)
      assert.ok(replies[0]!.taskId, 'on the remote task')
      assert.equal(sentFor(run.id).length, 1, 'the task itself once')
    })

    it('a card that does not stream is polled with GetTask, as before', async () => {
      remote.behaviour = 'work'
      remote.streaming = false
      try {
        const { streamId, events, cycleId } = await setUp('Polled')
        events.close()
        const from = remote.calls.length
        const run = await startRun(app, streamId, cycleId)
        await waitFor(() => sentFor(run.id).length === 1 || undefined, 10000, 'the message')
        await waitFor(() => remote.calls.slice(from).some((c) => c.method === 'GetTask') || undefined, 10000, 'a look')
        remote.finish('polled answer')
        const done = await runIn(app, run.id, ['succeeded', 'failed'])
        assert.equal(done.status, 'succeeded', JSON.stringify(done.phases[0].error))
        assert.equal(done.phases[0].output.text, 'polled answer')
        const methods = new Set(remote.calls.slice(from).map((c) => c.method))
        assert.ok(methods.has('SendMessage'))
        assert.ok(!methods.has('SendStreamingMessage') && !methods.has('SubscribeToTask'), [...methods].join())
      } finally {
        remote.streaming = true
      }
    })

    it('a stream still open at the dispatch time-out is cut and followed again with SubscribeToTask', async () => {
      remote.behaviour = 'stream'
      const { streamId, events, cycleId } = await setUp('Long')
      events.close()
      const from = remote.calls.length
      const run = await startRun(app, streamId, cycleId)
      // No drop this time: the only way to a subscription is the dispatch time-out (2.5 s here) of the first stream.
      await waitFor(() => remote.calls.slice(from).some((c) => c.method === 'SubscribeToTask') || undefined, 10000, 'a subscription after the time-out')
      remote.finish(' at last')
      const done = await runIn(app, run.id, ['succeeded', 'failed'])
      assert.equal(done.status, 'succeeded', JSON.stringify(done.phases[0].error))
      assert.equal(done.phases[0].output.text, 'Hello world at last')
      assert.equal(sentFor(run.id).length, 1)
    })
  })
}
