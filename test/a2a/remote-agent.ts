// A remote A2A agent for tests, built with the official SDK (DefaultRequestHandler, its JSON-RPC transport handler)
// on a plain node:http server on 127.0.0.1. It records every message it receives; `behaviour` says how it answers:
// completing at once, working until `finish()`, hanging, answering garbage, or asking for input (then, with
// `ask-then-work`, working on the answer until `finish()`), or asking for an authorization (`authorize`, then
// answering with the reply it got). With `streaming` its card says it streams, and SendStreamingMessage and
// SubscribeToTask answer as Server-Sent Events written from the SDK's transport handler (`stream`: the answer's
// artifact comes in chunks, the last at `finish()`; `flood`: one artifact replaced by 64 KiB texts, at most `floodBytes`
// in all, then by the answer `flooded`); `dropStreamAfter` cuts the next stream after that many events;
// `holdNextLook` holds the next GetTask until the test lets it go.
import { createServer, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { randomUUID } from 'node:crypto'
import { AgentCard, SSE_HEADERS, TaskState, formatSSEErrorEvent, formatSSEEvent } from '@a2a-js/sdk'
import { DefaultRequestHandler, InMemoryTaskStore, JsonRpcTransportHandler, ServerCallContext, type AgentExecutor, type ExecutionEventBus } from '@a2a-js/sdk/server'

export type Behaviour = 'complete' | 'work' | 'hang' | 'garbage' | 'ask' | 'ask-then-work' | 'authorize' | 'stream' | 'flood'

export interface RemoteAgent {
  cardUrl: string
  /** The messages of SendMessage and SendStreamingMessage calls, as sent (ProtoJSON). */
  received: Array<Record<string, any>>
  authorizations: Array<string | undefined>
  /** Every JSON-RPC method called, in order, with its params. */
  calls: Array<{ method: string; params: any }>
  behaviour: Behaviour
  /** What the card says of streaming (the SDK's handler itself always streams). */
  streaming: boolean
  /** Cuts the next event stream (its socket destroyed) after this many events; the remote goes on with the task. */
  dropStreamAfter: number | null
  /** How many bytes of status text a `flood` task sends before it completes. */
  floodBytes: number
  /** Completes every task left working with this text. */
  finish(text: string): void
  /** Holds the next GetTask (a look) until the function returned is called; the call is recorded when it arrives. */
  holdNextLook(): () => void
  close(): Promise<void>
}

export async function startRemoteAgent(behaviour: Behaviour = 'complete', options: { streaming?: boolean } = {}): Promise<RemoteAgent> {
  const waiting = new Map<string, { bus: ExecutionEventBus; contextId: string; done: () => void; artifactId?: string }>()
  const chunk = (taskId: string, contextId: string, artifactId: string, text: string, append: boolean, lastChunk: boolean) => ({
    kind: 'artifactUpdate' as const,
    data: { taskId, contextId, artifact: { artifactId, name: 'answer', description: '', parts: [{ content: { $case: 'text' as const, value: text }, mediaType: 'text/plain', filename: '', metadata: undefined }], metadata: undefined, extensions: [] }, append, lastChunk, metadata: undefined },
  })
  let heldLook: Promise<void> | null = null
  const state: RemoteAgent = {
    cardUrl: '', received: [], authorizations: [], calls: [], behaviour, streaming: options.streaming ?? false, dropStreamAfter: null, floodBytes: 0,
    holdNextLook() {
      let release = () => {}
      heldLook = new Promise<void>((resolve) => (release = resolve))
      return release
    },
    finish(text) {
      for (const [taskId, { bus, contextId, done, artifactId }] of waiting) {
        bus.publish(artifactId ? chunk(taskId, contextId, artifactId, text, true, true) : chunk(taskId, contextId, randomUUID(), text, false, true))
        bus.publish({ kind: 'statusUpdate', data: { taskId, contextId, status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: new Date().toISOString() }, metadata: undefined } })
        done()
      }
      waiting.clear()
    },
    close: async () => {},
  }
  const executor: AgentExecutor = {
    async execute(context, bus) {
      const { taskId, contextId } = context
      const said = context.userMessage.parts.find((p) => p.content?.$case === 'text')
      const words = said?.content?.$case === 'text' ? said.content.value : ''
      const at = () => new Date().toISOString()
      if (context.task) {
        // A follow-up on a task that asked: the reply is the answer.
        bus.publish({ kind: 'task', data: { ...context.task, status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: at() } } })
        if (state.behaviour === 'ask-then-work') {
          await new Promise<void>((resolve) => waiting.set(taskId, { bus, contextId, done: resolve }))
          return
        }
        bus.publish({ kind: 'artifactUpdate', data: { taskId, contextId, artifact: { artifactId: randomUUID(), name: 'answer', description: '', parts: [{ content: { $case: 'text', value: `answer was: ${words}` }, mediaType: 'text/plain', filename: '', metadata: undefined }], metadata: undefined, extensions: [] }, append: false, lastChunk: true, metadata: undefined } })
        bus.publish({ kind: 'statusUpdate', data: { taskId, contextId, status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: at() }, metadata: undefined } })
        return
      }
      if (state.behaviour === 'ask' || state.behaviour === 'ask-then-work' || state.behaviour === 'authorize') {
        const authorize = state.behaviour === 'authorize'
        bus.publish({ kind: 'task', data: { id: taskId, contextId, status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: at() }, artifacts: [], history: [context.userMessage], metadata: undefined } })
        const question = { messageId: randomUUID(), contextId, taskId, role: 2, parts: [{ content: { $case: 'text' as const, value: authorize ? 'May I delete the old backups?' : 'Which year?' }, mediaType: 'text/plain', filename: '', metadata: undefined }], metadata: undefined, extensions: [], referenceTaskIds: [] }
        bus.publish({ kind: 'statusUpdate', data: { taskId, contextId, status: { state: authorize ? TaskState.TASK_STATE_AUTH_REQUIRED : TaskState.TASK_STATE_INPUT_REQUIRED, message: question, timestamp: at() }, metadata: undefined } })
        return
      }
      bus.publish({ kind: 'task', data: { id: taskId, contextId, status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() }, artifacts: [], history: [context.userMessage], metadata: undefined } })
      bus.publish({ kind: 'statusUpdate', data: { taskId, contextId, status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: new Date().toISOString() }, metadata: undefined } })
      // The executor runs until its task ends (the SDK tears a bus down when its executor returns).
      const artifactId = state.behaviour === 'stream' ? randomUUID() : undefined
      const ended = new Promise<void>((resolve) => waiting.set(taskId, { bus, contextId, done: resolve, ...(artifactId ? { artifactId } : {}) }))
      if (artifactId) {
        bus.publish(chunk(taskId, contextId, artifactId, 'Hello', false, false))
        bus.publish(chunk(taskId, contextId, artifactId, ' world', true, false))
      }
      const text = context.userMessage.parts.find((p) => p.content?.$case === 'text')
      if (state.behaviour === 'flood') {
        // One artifact replaced again and again (so the task itself stays small), then replaced by the answer.
        const piece = 'x'.repeat(64 * 1024)
        const artifactId = randomUUID()
        for (let sent = piece.length; sent <= state.floodBytes; sent += piece.length) bus.publish(chunk(taskId, contextId, artifactId, piece, false, false))
        bus.publish(chunk(taskId, contextId, artifactId, 'flooded', false, true))
        bus.publish({ kind: 'statusUpdate', data: { taskId, contextId, status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: new Date().toISOString() }, metadata: undefined } })
        waiting.delete(taskId)
        return
      }
      if (state.behaviour === 'complete') state.finish(`remote did: ${text?.content?.$case === 'text' ? text.content.value.split('\n')[0] : ''}`)
      await ended
    },
    async cancelTask(taskId, bus) {
      bus.publish({ kind: 'statusUpdate', data: { taskId, contextId: '', status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: new Date().toISOString() }, metadata: undefined } })
      bus.finished()
    },
  }
  const cardJson = () => ({
    name: 'Remote', description: 'A remote agent', version: '1.0',
    supportedInterfaces: [{ url: `${base}/rpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: { streaming: state.streaming, pushNotifications: false }, defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'],
    skills: [{ id: 'do', name: 'do', description: 'does', tags: [], examples: [] }],
  })
  let base = ''
  const handler = new DefaultRequestHandler(AgentCard.fromJSON({ ...cardJson(), capabilities: { streaming: true, pushNotifications: false } }), new InMemoryTaskStore(), executor)
  const transport = new JsonRpcTransportHandler(handler)
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', async () => {
      state.authorizations.push(req.headers.authorization)
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify(cardJson()))
        return
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      state.calls.push({ method: body.method, params: body.params })
      if (body.method === 'SendMessage' || body.method === 'SendStreamingMessage') state.received.push(body.params.message)
      if (body.method === 'GetTask' && heldLook) {
        const held = heldLook
        heldLook = null
        await held
      }
      if (state.behaviour === 'hang' && (body.method === 'SendMessage' || body.method === 'SendStreamingMessage')) return
      if (state.behaviour === 'garbage') {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end('this is not JSON-RPC')
        return
      }
      const answer = await transport.handle(body, new ServerCallContext({ requestedVersion: String(req.headers['a2a-version'] ?? '0.3') }))
      if (Symbol.asyncIterator in (answer as object)) return writeStream(res, body.id, answer as AsyncGenerator<unknown>)
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify(answer))
    })
  })
  /**
   * As the SDK's own HTTP handlers do: an error before the first event is a JSON-RPC error answer, later ones an
   * error event. A cut stream is read on to its end (the SDK stores a streamed task's events as it reads them).
   */
  const writeStream = async (res: ServerResponse, id: unknown, events: AsyncGenerator<unknown>) => {
    const iterator = events[Symbol.asyncIterator]()
    let first: IteratorResult<unknown>
    try {
      first = await iterator.next()
    } catch (error) {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ jsonrpc: '2.0', id, error: JsonRpcTransportHandler.mapToJSONRPCError(error) }))
      return
    }
    res.writeHead(200, SSE_HEADERS)
    const dropAfter = state.dropStreamAfter
    state.dropStreamAfter = null
    let written = 0
    const write = (event: unknown) => {
      if (res.destroyed) return
      // Cut once the events are on their way (destroyed at once, the socket would drop what it still buffers).
      if (dropAfter !== null && ++written >= dropAfter) res.write(formatSSEEvent(event), () => res.socket?.destroy())
      else res.write(formatSSEEvent(event))
    }
    try {
      if (!first.done) write(first.value)
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) write(next.value)
    } catch (error) {
      if (!res.destroyed) res.write(formatSSEErrorEvent({ jsonrpc: '2.0', id, error: JsonRpcTransportHandler.mapToJSONRPCError(error) }))
    }
    if (!res.destroyed) res.end()
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  state.cardUrl = `${base}/.well-known/agent-card.json`
  state.close = () => new Promise((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  })
  return state
}
