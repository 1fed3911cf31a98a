// Streaming answers (docs/streaming-and-usage.md) on both databases, through the real client libraries against
// local fakes: Claude (Anthropic's streaming events through the AI SDK), Mistral chat chunks, a webhook agent
// answering Server-Sent Events, a token-only agent posting /deltas. The message appears at the first delta with
// status streaming, deltas go live without ids and are not in the log, one message.completed ends it; a retried
// delivery resets the same message; a failure leaves it failed; it cannot be edited while it streams; an agent
// that streams for ever is cut by the dispatch time-out. Usage and cost are summed; the token counter counts.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { startAnthropicFake } from '../fakes/vendors/anthropic.js'
import { startMistralFake } from '../fakes/vendors/mistral.js'
import { SECRET } from '../fakes/vendors/context.js'
import { openEventStream, type SseMessage, type SseStream } from '../events/sse-client.js'
import { createServer, type Server } from 'node:http'
import { waitFor } from '../runs/agent-server.js'
import { createAgent, createCycle, createStream, getRun, runIn, startRun } from '../runs/setup.js'
import { bearer, createKey } from '../auth.js'

async function createCredential(app: FastifyInstance, secret: string): Promise<string> {
  const res = await send(app, 'POST', '/api/credentials', { name: 'vendor key', secret })
  assert.equal(res.statusCode, 201, res.body)
  return res.json().id
}

const parsed = (m: SseMessage) => JSON.parse(m.data as string)

/** Waits for the message.completed event of a message in the SSE stream and returns the frames of that message. */
async function framesOf(sse: SseStream, ms = 15000) {
  const done = await waitFor(() => sse.messages.find((m) => m.event === 'message.completed'), ms, 'message.completed')
  const messageId = parsed(done).data.id
  const created = sse.messages.find((m) => m.event === 'message.created' && parsed(m).data.id === messageId)
  const deltas = sse.messages.filter((m) => m.event === 'message.delta' && parsed(m).messageId === messageId)
  return { messageId, created, deltas, completed: parsed(done).data }
}

/** Applies the deltas as a client would: text = text.slice(0, offset) + delta. */
function applyDeltas(deltas: SseMessage[]): string {
  let text = ''
  for (const frame of deltas) {
    const d = parsed(frame)
    text = text.slice(0, d.offset) + d.text
  }
  return text
}

/** An SSE answer of a webhook agent: deltas `gapMs` apart, then the last frame (or a cut connection). */
function sseAnswer(res: ServerResponse, deltas: string[], last: unknown | 'cut', gapMs = 20) {
  res.writeHead(200, { 'content-type': 'text/event-stream' })
  let i = 0
  const next = () => {
    if (i < deltas.length) {
      res.write(`data: ${JSON.stringify({ delta: deltas[i++] })}\n\n`)
      setTimeout(next, gapMs)
    } else if (last === 'cut') res.socket?.destroy()
    else res.end(`data: ${JSON.stringify(last)}\n\n`)
  }
  next()
}

for (const dialect of dialects()) {
  describe(`streaming answers (${dialect})`, () => {
    let app: FastifyInstance
    let base: string
    let anthropic: Awaited<ReturnType<typeof startAnthropicFake>>
    let mistral: Awaited<ReturnType<typeof startMistralFake>>
    let hook: Awaited<ReturnType<typeof startSseHook>>
    let credentialId: string

    before(async () => {
      app = await build(dialect, { TANDEM_WORKERS: '4', TANDEM_DISPATCH_ATTEMPTS: '2', TANDEM_DISPATCH_TIMEOUT_MS: '2500', TANDEM_EGRESS_ALLOW: '127.0.0.0/8' }, { ownDatabase: true })
      await app.listen({ port: 0, host: '127.0.0.1' })
      const address = app.server.address() as { port: number }
      base = `http://127.0.0.1:${address.port}`
      anthropic = await startAnthropicFake(SECRET)
      mistral = await startMistralFake(SECRET)
      hook = await startSseHook()
      credentialId = await createCredential(app, SECRET)
    })
    after(async () => {
      await app.close()
      await anthropic.close()
      await mistral.close()
      hook.server.closeAllConnections()
      await new Promise((resolve) => hook.server.close(resolve))
    })

    async function streamAndRun(agentId: string, sse?: SseStream) {
      const streamId = await createStream(app, `s-${Math.random()}`)
      const events = sse ?? (await openEventStream(`${base}/api/streams/${streamId}/events`))
      const run = await startRun(app, streamId, await createCycle(app, streamId, [{ agentId }]))
      return { streamId, events, run }
    }

    it('claude: the message appears at the first delta, deltas go live without ids and are not stored, one message.completed; usage and cost', async () => {
      const agentId = await createAgent(app, {
        providerType: 'claude', authMode: 'api_key', credentialId, endpointUrl: anthropic.base,
        capabilities: { streaming: true, tools: [] }, config: { model: 'claude-test-1', pricing: { inputPerMTok: 3, outputPerMTok: 15 } },
      })
      anthropic.steps.set({ deltas: ['Hel', 'lo ', 'wor', 'ld'], gapMs: 60, usage: { input: 1000, output: 200 } })
      const { streamId, events, run } = await streamAndRun(agentId)
      const { messageId, created, deltas, completed } = await framesOf(events)
      events.close()
      assert.ok(created, 'message.created came')
      assert.equal(parsed(created!).data.status, 'streaming')
      assert.equal(parsed(created!).data.authorType, 'agent')
      assert.ok(deltas.length >= 2, `deltas went live (${deltas.length})`)
      for (const d of deltas) assert.equal(d.id, undefined, 'a delta has no id')
      assert.equal(applyDeltas(deltas), 'Hello world')
      assert.equal(completed.status, 'complete')
      assert.equal(completed.text, 'Hello world')
      assert.equal(anthropic.requests.at(-1)!.body.stream, true)

      const done = await runIn(app, run.id, 'succeeded')
      assert.equal(done.phases[0].output.messageId, messageId, 'the phase took the streamed message')
      assert.deepEqual(done.phases[0].usage, { inputTokens: 1000, outputTokens: 200 })
      assert.equal(done.phases[0].costUsd, 0.006)
      assert.deepEqual(done.usage, { inputTokens: 1000, outputTokens: 200 })
      assert.equal(done.costUsd, 0.006)

      const messages = (await send(app, 'GET', `/api/chat/streams/${streamId}/messages`)).json().data
      assert.equal(messages.length, 1, 'one message for the attempt')
      assert.equal(messages[0].status, 'complete')
      assert.equal((await send(app, 'GET', `/api/chat/messages/${messageId}/revisions`)).json().data.length, 0, 'streaming writes are no revisions')
      const log = (await send(app, 'GET', `/api/streams/${streamId}/events`, undefined, { accept: 'application/json' })).json().data
      assert.deepEqual(log.filter((e: any) => e.type.startsWith('message.')).map((e: any) => e.type), ['message.created', 'message.completed'], 'deltas are not in the log')

      const metrics = (await send(app, 'GET', '/metrics')).body
      assert.match(metrics, /tandem_agent_tokens_total\{provider="claude",direction="input"\} \d+/)
      assert.match(metrics, /tandem_agent_tokens_total\{provider="claude",direction="output"\} \d+/)
    })

    it('mistral chat: streamed through the AI SDK, with usage', async () => {
      const agentId = await createAgent(app, {
        providerType: 'mistral', authMode: 'api_key', credentialId, endpointUrl: mistral.base,
        capabilities: { streaming: true, tools: [] }, config: { model: 'mistral-test-1' },
      })
      mistral.steps.set({ deltas: ['Bon', 'jour'], gapMs: 40, usage: { input: 7, output: 3 } })
      const { events, run } = await streamAndRun(agentId)
      const { deltas, completed } = await framesOf(events)
      events.close()
      assert.equal(applyDeltas(deltas), 'Bonjour')
      assert.equal(completed.text, 'Bonjour')
      const done = await runIn(app, run.id, 'succeeded')
      assert.deepEqual(done.usage, { inputTokens: 7, outputTokens: 3 })
      assert.equal(done.costUsd, null, 'no pricing, no cost')
    })

    it('an agent that does not stream answers whole (no deltas), usage still recorded', async () => {
      const agentId = await createAgent(app, { providerType: 'claude', authMode: 'api_key', credentialId, endpointUrl: anthropic.base, config: { model: 'claude-test-1' } })
      anthropic.steps.set({ text: 'whole', usage: { input: 5, output: 6 } })
      const { events, run } = await streamAndRun(agentId)
      const done = await runIn(app, run.id, 'succeeded')
      events.close()
      assert.equal(anthropic.requests.at(-1)!.body.stream, undefined)
      assert.equal(events.messages.filter((m) => m.event === 'message.delta').length, 0)
      assert.deepEqual(done.usage, { inputTokens: 5, outputTokens: 6 })
    })

    it('webhook SSE: a delivery cut mid-stream is retried into the same message with a reset', async () => {
      const agentId = await createAgent(app, { providerType: 'custom_webhook', endpointUrl: hook.url, capabilities: { streaming: true, tools: [] } })
      hook.deliveries = 0
      hook.answers = [
        (res) => sseAnswer(res, ['first ', 'try '], 'cut'),
        (res) => sseAnswer(res, ['second ', 'try'], { output: { text: 'second try' }, usage: { inputTokens: 4, outputTokens: 2 } }),
      ]
      const { streamId, events, run } = await streamAndRun(agentId)
      const { messageId, deltas, completed } = await framesOf(events, 20000)
      events.close()
      assert.equal(hook.deliveries, 2)
      const resets = deltas.filter((d) => parsed(d).reset === true)
      assert.equal(resets.length, 1, 'the retried delivery started with a reset')
      assert.equal(parsed(resets[0]!).offset, 0)
      assert.equal(applyDeltas(deltas), 'second try')
      assert.equal(completed.text, 'second try')
      const done = await runIn(app, run.id, 'succeeded')
      assert.equal(done.phases[0].output.messageId, messageId)
      assert.deepEqual(done.usage, { inputTokens: 4, outputTokens: 2 })
      const messages = (await send(app, 'GET', `/api/chat/streams/${streamId}/messages`)).json().data
      assert.equal(messages.length, 1, 'one message, however many deliveries')
    })

    it('webhook SSE: an error after deltas leaves the message failed with its text', async () => {
      const agentId = await createAgent(app, { providerType: 'custom_webhook', endpointUrl: hook.url, capabilities: { streaming: true, tools: [] } })
      hook.answers = [(res) => sseAnswer(res, ['half ', 'done'], { error: { detail: 'the model gave up' } })]
      const { events, run } = await streamAndRun(agentId)
      const { completed } = await framesOf(events)
      events.close()
      assert.equal(completed.status, 'failed')
      assert.equal(completed.text, 'half done')
      const failed = await runIn(app, run.id, 'failed')
      assert.match(failed.error.type, /agent-failed/)
    })

    it('an agent streaming for ever is cut by the dispatch time-out; the message ends failed', async () => {
      const agentId = await createAgent(app, {
        providerType: 'claude', authMode: 'api_key', credentialId, endpointUrl: anthropic.base,
        capabilities: { streaming: true, tools: [] }, config: { model: 'claude-test-1' },
      })
      anthropic.steps.set({ forever: true, gapMs: 100 })
      const { events, run } = await streamAndRun(agentId)
      const failed = await runIn(app, run.id, 'failed', 30000)
      assert.match(failed.error.type, /agent-unreachable/)
      const { completed, deltas } = await framesOf(events)
      events.close()
      assert.equal(completed.status, 'failed')
      assert.ok(deltas.some((d) => parsed(d).reset === true), 'the second delivery reset the message')
      anthropic.steps.set({ text: 'It is a bug.' })
    })

    it('token-only: /deltas before the result; 409 on editing a streaming message; the result completes it', async () => {
      const agentId = await createAgent(app, { providerType: 'custom_token_only', capabilities: { streaming: true, tools: [] } })
      const workspaceId = (await send(app, 'GET', '/api/me')).json().workspaceId
      const key = (await createKey(app, { workspaceId, name: `streamer-${dialect}`, agentId })).key
      const { streamId, events, run } = await streamAndRun(agentId)
      const task: any = await waitFor(async () => {
        const res = await send(app, 'POST', '/api/tasks/claim', {}, bearer(key))
        return res.statusCode === 200 ? res.json() : undefined
      })
      const path = `/api/tasks/${task.task.id}/deltas`
      const auth = bearer(task.result.token)
      const first = await send(app, 'POST', path, { text: 'Step one. ' }, auth)
      assert.equal(first.statusCode, 200, first.body)
      assert.equal(first.json().offset, 0)
      const second = await send(app, 'POST', path, { text: 'Step two.' }, bearer(key))
      assert.equal(second.statusCode, 200, second.body)
      assert.deepEqual([second.json().offset, second.json().messageId], [10, first.json().messageId])
      const messageId = first.json().messageId
      const read = (await send(app, 'GET', `/api/chat/messages/${messageId}`)).json()
      // Should this ever read otherwise again, say what the database holds (the open flake's evidence).
      const evidence = async () => JSON.stringify({
        read,
        rows: await app.database.db.selectFrom('messages').select(['id', 'text', 'status', 'stream_key', 'revision']).where('task_id', '=', task.task.id).execute(),
        task: await app.database.db.selectFrom('run_tasks').select(['state', 'token_hash', 'attempt']).where('id', '=', task.task.id).executeTakeFirst(),
      })
      assert.equal(read.status, 'streaming', await evidence())
      assert.equal(read.text, 'Step one. Step two.', await evidence())
      const edit = await send(app, 'PATCH', `/api/chat/messages/${messageId}`, { content: { blocks: [{ type: 'rich_text', elements: [{ type: 'paragraph', children: [{ type: 'text', text: 'x' }] }] }] } })
      assert.equal(edit.statusCode, 409)
      assert.equal(edit.json().type, 'urn:tandem:problem:message-streaming')
      assert.equal((await send(app, 'POST', path, { text: '' }, auth)).statusCode, 400)
      assert.equal((await send(app, 'POST', path, { text: 'x' }, { authorization: 'Bearer tdt_nope' })).statusCode, 401)
      const answered = await send(app, 'POST', `/api/tasks/${task.task.id}/result`, { output: { text: 'Step one. Step two.' }, usage: { inputTokens: 3, outputTokens: 4 } }, auth)
      assert.equal(answered.statusCode, 200, answered.body)
      const { deltas, completed } = await framesOf(events)
      events.close()
      assert.equal(applyDeltas(deltas), 'Step one. Step two.')
      assert.equal(completed.id, messageId)
      const done = await runIn(app, run.id, 'succeeded')
      assert.equal(done.phases[0].output.messageId, messageId)
      assert.deepEqual(done.usage, { inputTokens: 3, outputTokens: 4 })
      assert.equal((await send(app, 'POST', path, { text: 'late' }, auth)).statusCode, 409)
      const messages = (await send(app, 'GET', `/api/chat/streams/${streamId}/messages`)).json().data
      assert.equal(messages.length, 1)
      assert.equal((await send(app, 'PATCH', `/api/chat/messages/${messageId}`, { content: { blocks: [{ type: 'rich_text', elements: [] }] } })).statusCode, 200, 'editable once complete')
    })

    it('token-only: a streamed message holds at most 40,000 characters; the delta past it fails the stream (409 message-too-long), later ones too', async () => {
      const agentId = await createAgent(app, { providerType: 'custom_token_only', capabilities: { streaming: true, tools: [] } })
      const workspaceId = (await send(app, 'GET', '/api/me')).json().workspaceId
      const key = (await createKey(app, { workspaceId, name: `long-${dialect}`, agentId })).key
      const { events, run } = await streamAndRun(agentId)
      const task: any = await waitFor(async () => {
        const res = await send(app, 'POST', '/api/tasks/claim', {}, bearer(key))
        return res.statusCode === 200 ? res.json() : undefined
      })
      const path = `/api/tasks/${task.task.id}/deltas`
      const auth = bearer(task.result.token)
      assert.equal((await send(app, 'POST', path, { text: 'a'.repeat(30000) }, auth)).statusCode, 200)
      const atBound = await send(app, 'POST', path, { text: 'b'.repeat(10000) }, auth)
      assert.equal(atBound.statusCode, 200, 'exactly 40,000 characters')
      const messageId = atBound.json().messageId
      const past = await send(app, 'POST', path, { text: 'c' }, auth)
      assert.equal(past.statusCode, 409, past.body)
      assert.equal(past.json().type, 'urn:tandem:problem:message-too-long')
      assert.match(past.json().detail, /at most 40000/)
      const failed = (await send(app, 'GET', `/api/chat/messages/${messageId}`)).json()
      assert.equal(failed.status, 'failed')
      assert.equal(failed.text.length, 40000)
      await waitFor(() => events.messages.find((m) => m.event === 'message.completed' && parsed(m).data.status === 'failed'), 5000, 'message.completed (failed)')
      events.close()
      const again = await send(app, 'POST', path, { text: 'd' }, auth)
      assert.equal(again.statusCode, 409, 'a failed stream takes no more deltas')
      assert.equal(again.json().type, 'urn:tandem:problem:message-too-long')
      assert.equal((await send(app, 'GET', `/api/chat/messages/${messageId}`)).json().text.length, 40000)
      const answered = await send(app, 'POST', `/api/tasks/${task.task.id}/result`, { output: { text: 'The short answer.' } }, auth)
      assert.equal(answered.statusCode, 200, answered.body)
      await runIn(app, run.id, 'succeeded')
    })

    it('token-only: a delta appends in SQL; neither the text so far nor its content travels to or from the database', async () => {
      const agentId = await createAgent(app, { providerType: 'custom_token_only', capabilities: { streaming: true, tools: [] } })
      const workspaceId = (await send(app, 'GET', '/api/me')).json().workspaceId
      const key = (await createKey(app, { workspaceId, name: `append-${dialect}`, agentId })).key
      const { events, run } = await streamAndRun(agentId)
      events.close()
      const task: any = await waitFor(async () => {
        const res = await send(app, 'POST', '/api/tasks/claim', {}, bearer(key))
        return res.statusCode === 200 ? res.json() : undefined
      })
      const path = `/api/tasks/${task.task.id}/deltas`
      const auth = bearer(task.result.token)
      const head = 'h'.repeat(20000)
      assert.equal((await send(app, 'POST', path, { text: head }, auth)).statusCode, 200)
      // Every query Kysely runs (transactions included: their executors share the prototype), with its values and rows.
      const executor = Object.getPrototypeOf(app.database.db.getExecutor()) as { executeQuery: (...args: any[]) => Promise<any> }
      const original = executor.executeQuery
      const traffic: string[] = []
      executor.executeQuery = async function (this: unknown, ...args: any[]) {
        const result = await original.apply(this, args)
        for (const value of [...args[0].parameters, ...result.rows.flatMap((row: object) => Object.values(row))]) if (typeof value === 'string') traffic.push(value)
        return result
      }
      const offsets: number[] = []
      try {
        for (const piece of ['one', 'two', 'three']) {
          const res = await send(app, 'POST', path, { text: piece }, auth)
          assert.equal(res.statusCode, 200, res.body)
          offsets.push(res.json().offset)
        }
      } finally {
        executor.executeQuery = original
      }
      assert.deepEqual(offsets, [20000, 20003, 20006])
      const longest = Math.max(...traffic.map((value) => value.length))
      assert.ok(longest < 1000, `a delta moved ${longest} characters to or from the database`)
      const last = await send(app, 'POST', path, { text: '.' }, auth)
      const message = (await send(app, 'GET', `/api/chat/messages/${last.json().messageId}`)).json()
      assert.equal(message.status, 'streaming')
      assert.equal(message.text, `${head}onetwothree.`)
      assert.equal(message.content.blocks[0].elements[0].children[0].text, `${head}onetwothree.`, 'the content follows the text')
      const answered = await send(app, 'POST', `/api/tasks/${task.task.id}/result`, { output: { text: 'Done.' } }, auth)
      assert.equal(answered.statusCode, 200, answered.body)
      await runIn(app, run.id, 'succeeded')
    })

    it('token-only without capabilities.streaming: /deltas is a 409 streaming-off', async () => {
      const agentId = await createAgent(app, { providerType: 'custom_token_only' })
      const workspaceId = (await send(app, 'GET', '/api/me')).json().workspaceId
      const key = (await createKey(app, { workspaceId, name: `plain-${dialect}`, agentId })).key
      const { events, run } = await streamAndRun(agentId)
      events.close()
      const task: any = await waitFor(async () => {
        const res = await send(app, 'POST', '/api/tasks/claim', {}, bearer(key))
        return res.statusCode === 200 ? res.json() : undefined
      })
      const res = await send(app, 'POST', `/api/tasks/${task.task.id}/deltas`, { text: 'hi' }, bearer(key))
      assert.equal(res.statusCode, 409)
      assert.equal(res.json().type, 'urn:tandem:problem:streaming-off')
      await send(app, 'POST', `/api/runs/${run.id}/cancel`)
      assert.equal((await getRun(app, run.id)).status, 'canceled')
    })
  })
}

/** A webhook agent that answers each delivery with the next scripted SSE answer. */
async function startSseHook() {
  const hook = { url: '', deliveries: 0, answers: [] as Array<(res: ServerResponse) => void>, server: undefined as unknown as Server }
  hook.server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      hook.deliveries += 1
      const answer = hook.answers.length > 1 ? hook.answers.shift() : hook.answers[0]
      if (answer) answer(res)
      else res.writeHead(500).end()
    })
  })
  await new Promise<void>((resolve) => hook.server.listen(0, '127.0.0.1', resolve))
  hook.url = `http://127.0.0.1:${(hook.server.address() as AddressInfo).port}/hook`
  return hook
}
