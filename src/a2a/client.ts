// A phase done by a remote A2A agent (docs/a2a.md): a custom_webhook agent with `config.protocol: "a2a"` whose
// endpointUrl is the remote's Agent Card. The card is read through the egress guard, and the task is sent once with
// the SDK's JSON-RPC client: as a SendStreamingMessage when the card says it streams (the stream is read as it
// comes, src/a2a/remote-stream.ts), else as a SendMessage (returnImmediately). The remote task is then followed from
// the engine's scheduled looks: SubscribeToTask for a remote that streams (a stream that dropped or outlived the
// dispatch time-out goes on there; a task that ended meanwhile is read with GetTask), GetTask for one that does not.
// At most once: the ledger's row is committed before the message leaves, the remote task's id is recorded at the
// first answer naming it, and a send whose outcome is unknown is never repeated.
import { AgentCard, Role, TaskState, type Message, type SendMessageRequest, type Task } from '@a2a-js/sdk'
import type { AdapterContext, AgentTarget, DeliveryOutcome, JsonObject, TaskPayload } from '../runs/adapters/adapter.js'
import { buildPrompt, promptAsText } from '../runs/adapters/prompt.js'
import { MAX_OUTPUT_TEXT_LENGTH } from '../runs/limits.js'
import type { RemoteTaskLedger } from './remote-ledger.js'
import { readTaskStream, type StreamEnd } from './remote-stream.js'
import type { WaitState } from './remote-waits.js'
import { clientFor, cut, failureOf, guardedFetch, newExchange, partsText, refused, rpcCodeOf, textPart, type Exchange } from './remote-wire.js'

// A subscription on a task that has ended: the spec's UnsupportedOperationError (the task is read with GetTask).
const TASK_ENDED = -32004

export const A2A_PROTOCOL = 'a2a'

/** `config.protocol`: "webhook" (the default) or "a2a"; anything else is a misconfiguration. */
export function protocolOf(agent: Pick<AgentTarget, 'config'>): 'webhook' | 'a2a' | null {
  const protocol = agent.config.protocol
  if (protocol === undefined || protocol === 'webhook') return 'webhook'
  return protocol === A2A_PROTOCOL ? 'a2a' : null
}

/** Where the remote agent is called: its JSON-RPC 1.0 endpoint, and whether its card says it streams. */
interface Remote {
  endpoint: string
  streaming: boolean
}

/** The remote's endpoint from its card, or an outcome that ends the attempt. */
async function remoteOf(agent: AgentTarget, context: AdapterContext, exchange: Exchange): Promise<Remote | DeliveryOutcome> {
  const fetchImpl = guardedFetch(context, agent.secret, exchange)
  let json: unknown
  try {
    const response = await fetchImpl(agent.endpointUrl as string, { method: 'GET', headers: { accept: 'application/json' } })
    if (response.status !== 200) return failureOf(new Error('card'), exchange, context, 'the card request')
    json = JSON.parse(await response.text())
  } catch (error) {
    return failureOf(error, exchange, context, 'the card request')
  }
  let card: AgentCard
  try {
    card = AgentCard.fromJSON(json)
  } catch {
    return { kind: 'failed', code: 'agent-unavailable', detail: 'the remote agent\'s card is not an A2A Agent Card' }
  }
  const chosen = card.supportedInterfaces.find((i) => i.protocolBinding === 'JSONRPC' && i.protocolVersion === '1.0')
  if (!chosen || !URL.canParse(chosen.url)) return { kind: 'failed', code: 'agent-unavailable', detail: 'the remote agent\'s card offers no JSON-RPC 1.0 interface' }
  return { endpoint: chosen.url, streaming: card.capabilities?.streaming === true }
}

const isRemote = (value: Remote | DeliveryOutcome): value is Remote => 'endpoint' in value

function answered(text: string): DeliveryOutcome {
  if (text.length > MAX_OUTPUT_TEXT_LENGTH) return { kind: 'failed', code: 'agent-failed', detail: `the remote agent's answer is ${text.length} characters; at most ${MAX_OUTPUT_TEXT_LENGTH}` }
  return { kind: 'answered', output: { text } }
}

/** The engine's next look at the remote task (a scheduled delivery with this state, src/runs/delivery.ts). */
const lookAgain = (task: Pick<Task, 'id' | 'contextId'>, remote: Remote): DeliveryOutcome =>
  ({ kind: 'poll', state: { remoteTaskId: task.id, remoteContextId: task.contextId, endpoint: remote.endpoint, streaming: remote.streaming } })

/** Where the remote task stands, as the engine's outcome: an answer, a failure, or another look later. */
function outcomeOfTask(task: Task, remote: Remote): DeliveryOutcome {
  const state = task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED
  const statusText = task.status?.message ? partsText(task.status.message.parts) : ''
  if (state === TaskState.TASK_STATE_COMPLETED) {
    const texts = task.artifacts.map((a) => partsText(a.parts)).filter((t) => t !== '')
    if (texts.length > 0) return answered(texts.join('\n\n'))
    if (statusText) return answered(statusText)
    return { kind: 'failed', code: 'agent-failed', detail: 'the remote task completed without an artifact or a status message' }
  }
  if (state === TaskState.TASK_STATE_FAILED || state === TaskState.TASK_STATE_REJECTED || state === TaskState.TASK_STATE_CANCELED) {
    return { kind: 'failed', code: 'agent-failed', detail: `the remote task ended ${TaskState[state]}${statusText ? `: ${cut(statusText)}` : ''}` }
  }
  return lookAgain(task, remote)
}

/** The task as a message; a revision continues the previous attempt's context and refers to its task. */
function messageOf(payload: TaskPayload, previous: { remoteTaskId: string; remoteContextId: string } | null): Message {
  const { result: _result, ...tandem } = payload
  return {
    messageId: payload.task.id, contextId: previous?.remoteContextId ?? '', taskId: '', role: Role.ROLE_USER, metadata: undefined, extensions: [],
    referenceTaskIds: previous ? [previous.remoteTaskId] : [],
    parts: [textPart(promptAsText(buildPrompt(payload))), { content: { $case: 'data', value: { tandem } }, mediaType: 'application/json', filename: '', metadata: undefined }],
  }
}

const sendRequest = (message: Message): SendMessageRequest =>
  ({ tenant: '', message, configuration: { acceptedOutputModes: ['text/plain'], taskPushNotificationConfig: undefined, returnImmediately: true, historyLength: 0 }, metadata: undefined })

const UNKNOWN_SEND = 'it is not sent again'

export async function deliverOverA2a(payload: TaskPayload, agent: AgentTarget, context: AdapterContext, ledger: RemoteTaskLedger): Promise<DeliveryOutcome> {
  const exchange = newExchange()
  const earlier = await ledger.find(payload.task.id)
  if (earlier) return followEarlier(earlier, payload, agent, context)
  const remote = await remoteOf(agent, context, exchange)
  if (!isRemote(remote)) return remote
  const raced = await ledger.claim(payload.task.id, remote.endpoint)
  if (raced) return followEarlier(raced, payload, agent, context)
  const previous = payload.task.attempt > 1 ? await ledger.previous(payload.task.id) : null
  const request = sendRequest(messageOf(payload, previous))
  if (remote.streaming) return sendStreaming(request, remote, payload, agent, context, ledger)
  let result: Message | Task
  try {
    const client = await clientFor(remote.endpoint, guardedFetch(context, agent.secret, exchange))
    result = await client.sendMessage(request, { signal: context.signal })
  } catch (error) {
    return unsent(error, exchange, context, payload, ledger)
  }
  if ('messageId' in result && !('status' in result)) return answered(partsText((result as Message).parts))
  const task = result as Task
  await ledger.remoteTask(payload.task.id, task.id, task.contextId)
  return followUp(task, remote, payload, agent, context)
}

/**
 * A send that failed before any answer named its task. One the remote never took (no connection, the egress guard,
 * a refusal) gives its claim back, so that a retry may send it (with the same messageId); any other is not sent
 * again.
 */
async function unsent(error: unknown, exchange: Exchange, context: AdapterContext, payload: TaskPayload, ledger: RemoteTaskLedger): Promise<DeliveryOutcome> {
  const outcome = failureOf(error, exchange, context, 'the message')
  if ((exchange.notSent || refused(error, exchange)) && !exchange.tooLarge) {
    await ledger.release(payload.task.id)
    return outcome
  }
  return { kind: 'failed', code: 'agent-failed', detail: `the message was sent but no answer naming its task came back (${outcome.kind === 'failed' || outcome.kind === 'retry' ? outcome.detail : 'no answer'}); ${UNKNOWN_SEND}` }
}

/** SendStreamingMessage: the task's id is recorded at the first event naming it, its artifacts stream into the message. */
async function sendStreaming(request: SendMessageRequest, remote: Remote, payload: TaskPayload, agent: AgentTarget, context: AdapterContext, ledger: RemoteTaskLedger): Promise<DeliveryOutcome> {
  const exchange = newExchange()
  const end = await readStream(remote, agent, context, exchange, (client, signal) => client.sendMessageStream(request, { signal }), (task) => ledger.remoteTask(payload.task.id, task.id, task.contextId))
  if (end.kind === 'none') return unsent(end.error ?? new Error('the stream ended empty'), exchange, context, payload, ledger)
  return afterStream(end, exchange, remote, payload, agent, context)
}

type OpenStream = (client: Awaited<ReturnType<typeof clientFor>>, signal: AbortSignal) => AsyncGenerator<import('@a2a-js/sdk').StreamResponse, void, undefined>

/** One event stream, read to a settled state or its end; the connection is let go of when the read stops. */
async function readStream(remote: Remote, agent: AgentTarget, context: AdapterContext, exchange: Exchange, open: OpenStream, onTask: (task: Task) => Promise<void>): Promise<StreamEnd> {
  const done = new AbortController()
  const signal = AbortSignal.any([context.signal, done.signal])
  try {
    const client = await clientFor(remote.endpoint, guardedFetch(context, agent.secret, exchange), true)
    return await readTaskStream(open(client, signal), { onTask, ...(context.onDelta ? { onText: context.onDelta } : {}) })
  } catch (error) {
    return { kind: 'none', error }
  } finally {
    done.abort()
  }
}

/** The connection broke (undici's network errors are TypeErrors) or the dispatch time-out cut it. */
const dropped = (error: unknown, context: AdapterContext) => context.signal.aborted || (error as Error | undefined)?.name === 'TypeError'

/** What a stream that named its task comes to: the task's state, or (cut short) another look with SubscribeToTask. */
function afterStream(end: Exclude<StreamEnd, { kind: 'none' }>, exchange: Exchange, remote: Remote, payload: TaskPayload, agent: AgentTarget, context: AdapterContext): Promise<DeliveryOutcome> | DeliveryOutcome {
  if (end.kind === 'message') return answered(partsText(end.message.parts))
  if (end.settled) return followUp(end.task, remote, payload, agent, context)
  if (exchange.tooLarge || exchange.egressDenied) return failureOf(end.error, exchange, context, 'the message')
  // Dropped, ended early or past the dispatch time-out: the task goes on, and so does Tandem, from the next look.
  // Anything else that broke it (an event that is not A2A, a JSON-RPC error) is that failure.
  if (end.error !== undefined && !dropped(end.error, context)) {
    const failure = failureOf(end.error, exchange, context, 'the stream')
    if (failure.kind === 'failed') return failure
  }
  return { ...(lookAgain(end.task, remote) as Extract<DeliveryOutcome, { kind: 'poll' }>), afterMs: context.signal.aborted ? 0 : undefined }
}

/**
 * The outcome of a look at the remote task. A remote that waits on its caller gets a wait of the phase first
 * (INPUT_REQUIRED a question, AUTH_REQUIRED an authorization to approve), then the operator's reply on the same
 * task (marked as sent before it is sent: never twice).
 */
async function followUp(task: Task, remote: Remote, payload: TaskPayload, agent: AgentTarget, context: AdapterContext): Promise<DeliveryOutcome> {
  const outcome = outcomeOfTask(task, remote)
  const waits = context.a2aWaits
  if (!waits) return outcome
  const taskId = payload.task.id
  const state = task.status?.state
  const statusText = task.status?.message ? partsText(task.status.message.parts) : ''
  if (state !== TaskState.TASK_STATE_AUTH_REQUIRED) await waits.movedOn(taskId)
  let wait: WaitState
  if (state === TaskState.TASK_STATE_INPUT_REQUIRED) {
    // While Tandem's operators are asked the remote is not looked at: the phase waits, and its answer brings a look.
    wait = await waits.question(taskId)
    if (wait === null) return (await waits.ask(taskId, statusText)) ? { kind: 'waiting' } : outcome
    if ('open' in wait) return { kind: 'waiting' }
  } else if (state === TaskState.TASK_STATE_AUTH_REQUIRED) {
    // An authorization keeps being looked at: a remote that moves on first needs no reply.
    wait = await waits.authorization(taskId)
    if (wait === null) {
      await waits.authorize(taskId, statusText)
      return outcome
    }
    if ('open' in wait) return outcome
  } else {
    return outcome
  }
  await waits.relayed(taskId, wait.callId, state === TaskState.TASK_STATE_AUTH_REQUIRED ? wait.answer : undefined)
  const exchange = newExchange()
  try {
    const client = await clientFor(remote.endpoint, guardedFetch(context, agent.secret, exchange))
    const reply: Message = {
      messageId: `${taskId}:${wait.callId}`, contextId: task.contextId, taskId: task.id, role: Role.ROLE_USER,
      parts: [textPart(wait.answer)], metadata: undefined, extensions: [], referenceTaskIds: [],
    }
    const answered = await client.sendMessage(sendRequest(reply), { signal: context.signal })
    if ('status' in answered && 'artifacts' in answered) return outcomeOfTask(answered as Task, remote)
  } catch (error) {
    const failure = failureOf(error, exchange, context, 'the reply')
    if (failure.kind === 'failed') return failure
  }
  return outcome
}

async function followEarlier(entry: { remoteTaskId: string | null; remoteContextId: string | null; endpointUrl: string }, payload: TaskPayload, agent: AgentTarget, context: AdapterContext): Promise<DeliveryOutcome> {
  if (entry.remoteTaskId === null) {
    return { kind: 'failed', code: 'agent-failed', detail: `the message was sent before (Tandem stopped or the call broke) and no answer naming its task came back; ${UNKNOWN_SEND}` }
  }
  return pollOverA2a({ remoteTaskId: entry.remoteTaskId, remoteContextId: entry.remoteContextId ?? '', endpoint: entry.endpointUrl }, payload, agent, context)
}

/**
 * A scheduled look at the remote task. A look whose state does not say whether the remote streams (after a
 * restart, or when a wait of the phase ends) reads the card again to know; if the card cannot be read, GetTask.
 */
export async function pollOverA2a(state: JsonObject, payload: TaskPayload, agent: AgentTarget, context: AdapterContext): Promise<DeliveryOutcome> {
  const remote: Remote = { endpoint: String(state.endpoint), streaming: state.streaming === true }
  if (state.streaming === undefined) {
    const card = await remoteOf(agent, context, newExchange())
    remote.streaming = isRemote(card) && card.streaming
  }
  const id = String(state.remoteTaskId)
  if (remote.streaming) {
    const exchange = newExchange()
    const end = await readStream(remote, agent, context, exchange, (client, signal) => client.resubscribeTask({ tenant: '', id }, { signal }), async () => {})
    if (end.kind !== 'none') return afterStream(end, exchange, remote, payload, agent, context)
    // Refused before any event: a task that has ended is read whole; anything else is a failed look.
    if (rpcCodeOf(end.error)?.code !== TASK_ENDED) return failureOf(end.error, exchange, context, 'the subscription')
  }
  const exchange = newExchange()
  try {
    const client = await clientFor(remote.endpoint, guardedFetch(context, agent.secret, exchange))
    const task = await client.getTask({ tenant: '', id, historyLength: 0 }, { signal: context.signal })
    return await followUp(task, remote, payload, agent, context)
  } catch (error) {
    return failureOf(error, exchange, context, 'the task look-up')
  }
}

/** One CancelTask of a remote task (the run ended, src/a2a/cancel.ts): null when done, else why not. */
export async function cancelRemoteTask(endpoint: string, remoteTaskId: string, secret: string | null, call: Pick<AdapterContext, 'fetch' | 'signal' | 'timeoutMs'>): Promise<string | null> {
  const exchange = newExchange()
  const context = call as AdapterContext
  try {
    const client = await clientFor(endpoint, guardedFetch(context, secret, exchange))
    await client.cancelTask({ tenant: '', id: remoteTaskId, metadata: undefined }, { signal: call.signal })
    return null
  } catch (error) {
    const outcome = failureOf(error, exchange, context, 'the cancel')
    return outcome.kind === 'failed' || outcome.kind === 'retry' ? outcome.detail : 'not canceled'
  }
}
