// A phase done by a remote A2A agent (docs/a2a.md): a custom_webhook agent with `config.protocol: "a2a"` whose
// endpointUrl is the remote's Agent Card. The card is read through the egress guard, the task is sent once as a
// SendMessage (returnImmediately) with the SDK's JSON-RPC client, and the remote task is then followed with GetTask
// from the engine's scheduled polls. At most once: the ledger's row is committed before the message leaves, and a
// send whose outcome is unknown is never repeated.
import { AgentCard, Role, TaskState, type Message, type Part, type Task } from '@a2a-js/sdk'
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client'
import type { AdapterContext, AgentTarget, DeliveryOutcome, JsonObject, TaskPayload } from '../runs/adapters/adapter.js'
import { buildPrompt, promptAsText } from '../runs/adapters/prompt.js'
import { MAX_OUTPUT_TEXT_LENGTH } from '../runs/limits.js'
import type { RemoteTaskLedger } from './remote-ledger.js'
import type { WaitState } from './remote-waits.js'

const MAX_BODY_BYTES = 1024 * 1024
const DETAIL_CHARS = 300
// Errors of the connection itself: the request never reached the remote, so sending again cannot repeat it.
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH'])

export const A2A_PROTOCOL = 'a2a'

/** `config.protocol`: "webhook" (the default) or "a2a"; anything else is a misconfiguration. */
export function protocolOf(agent: Pick<AgentTarget, 'config'>): 'webhook' | 'a2a' | null {
  const protocol = agent.config.protocol
  if (protocol === undefined || protocol === 'webhook') return 'webhook'
  return protocol === A2A_PROTOCOL ? 'a2a' : null
}

/** What the last HTTP exchange came to: whether a response arrived, and its status. */
interface Exchange {
  status: number | null
  notSent: boolean
  egressDenied: string | null
  tooLarge: boolean
}

/** fetch through the egress guard with the agent's key, each body read to at most MAX_BODY_BYTES. */
function guardedFetch(context: AdapterContext, secret: string | null, exchange: Exchange): typeof fetch {
  return async (input, init = {}) => {
    const headers = new Headers(init.headers)
    if (secret !== null) headers.set('authorization', `Bearer ${secret}`)
    if (context.traceparent) headers.set('traceparent', context.traceparent)
    exchange.status = null
    let response: Response
    try {
      response = await context.fetch(input, { ...init, headers, redirect: 'manual', signal: init.signal ?? context.signal })
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause
      if ((error as Error).name === 'EgressDeniedError') exchange.egressDenied = (error as Error).message
      exchange.notSent = (error as Error).name === 'EgressDeniedError' || NOT_SENT_CODES.has(cause?.code ?? '')
      throw error
    }
    exchange.status = response.status
    const text = await readBounded(response)
    if (text === null) {
      exchange.tooLarge = true
      throw new Error('the answer is too large')
    }
    return new Response(text, { status: response.status, statusText: response.statusText, headers: response.headers })
  }
}

async function readBounded(response: Response): Promise<string | null> {
  if (!response.body) return ''
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength
    if (size > MAX_BODY_BYTES) {
      await response.body.cancel().catch(() => undefined)
      return null
    }
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}

const cut = (text: string) => (text.length > DETAIL_CHARS ? `${text.slice(0, DETAIL_CHARS)}…` : text)

/** What a failed exchange means for the attempt (never the secret: only codes and the remote's own error text). */
function failureOf(error: unknown, exchange: Exchange, context: AdapterContext, what: string): DeliveryOutcome {
  if (exchange.egressDenied) return { kind: 'failed', code: 'egress-denied', detail: exchange.egressDenied }
  if (exchange.tooLarge) return { kind: 'failed', code: 'agent-failed', detail: `the remote agent's answer to ${what} is larger than ${MAX_BODY_BYTES} bytes` }
  const status = exchange.status
  const rpc = error as { code?: unknown; message?: unknown }
  if (status !== null && status >= 300) {
    if (status === 408 || status === 429 || status >= 500) return { kind: 'retry', detail: `the remote agent answered ${what} with ${status}` }
    return { kind: 'failed', code: 'agent-rejected', detail: `the remote agent answered ${what} with ${status}` }
  }
  if (status !== null && typeof rpc.code === 'number') {
    const detail = `the remote agent refused ${what}: ${rpc.code} ${cut(String(rpc.message ?? ''))}`
    return rpc.code === -32603 ? { kind: 'retry', detail } : { kind: 'failed', code: 'agent-rejected', detail }
  }
  if (status !== null) return { kind: 'failed', code: 'agent-failed', detail: `the remote agent's answer to ${what} is not a valid A2A answer` }
  if (context.signal.aborted) return { kind: 'retry', detail: `no answer to ${what} within ${context.timeoutMs} ms` }
  return { kind: 'retry', detail: `the connection for ${what} failed` }
}

function clientFor(url: string, fetchImpl: typeof fetch): Promise<Client> {
  const card = AgentCard.fromJSON({ name: 'remote', supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }], capabilities: {} })
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl })] }))
  return factory.createFromAgentCard(card)
}

/** The remote's JSON-RPC 1.0 endpoint from its card, or an outcome that ends the attempt. */
async function endpointOf(agent: AgentTarget, context: AdapterContext, exchange: Exchange): Promise<string | DeliveryOutcome> {
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
  return chosen.url
}

const textPart = (value: string): Part => ({ content: { $case: 'text', value }, mediaType: 'text/plain', filename: '', metadata: undefined })
const partsText = (parts: Part[]) =>
  parts.map((p) => {
    const content = p.content
    if (content?.$case === 'text') return content.value
    if (content?.$case === 'data') return JSON.stringify(content.value)
    if (content?.$case === 'url') return content.value
    if (content?.$case === 'raw') return `[file ${p.filename || 'unnamed'}, ${content.value.length} bytes]`
    return ''
  }).join('')

function answered(text: string): DeliveryOutcome {
  if (text.length > MAX_OUTPUT_TEXT_LENGTH) return { kind: 'failed', code: 'agent-failed', detail: `the remote agent's answer is ${text.length} characters; at most ${MAX_OUTPUT_TEXT_LENGTH}` }
  return { kind: 'answered', output: { text } }
}

/** Where the remote task stands, as the engine's outcome: an answer, a failure, or another look later. */
function outcomeOfTask(task: Task, endpoint: string): DeliveryOutcome {
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
  return { kind: 'poll', state: { remoteTaskId: task.id, remoteContextId: task.contextId, endpoint } }
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

export async function deliverOverA2a(payload: TaskPayload, agent: AgentTarget, context: AdapterContext, ledger: RemoteTaskLedger): Promise<DeliveryOutcome> {
  const exchange: Exchange = { status: null, notSent: false, egressDenied: null, tooLarge: false }
  const earlier = await ledger.find(payload.task.id)
  if (earlier) return followEarlier(earlier, payload, agent, context, ledger)
  const endpoint = await endpointOf(agent, context, exchange)
  if (typeof endpoint !== 'string') return endpoint
  const raced = await ledger.claim(payload.task.id, endpoint)
  if (raced) return followEarlier(raced, payload, agent, context, ledger)
  let result: Message | Task
  const previous = payload.task.attempt > 1 ? await ledger.previous(payload.task.id) : null
  try {
    const client = await clientFor(endpoint, guardedFetch(context, agent.secret, exchange))
    result = await client.sendMessage(
      { tenant: '', message: messageOf(payload, previous), configuration: { acceptedOutputModes: ['text/plain'], taskPushNotificationConfig: undefined, returnImmediately: true, historyLength: 0 }, metadata: undefined },
      { signal: context.signal },
    )
  } catch (error) {
    const outcome = failureOf(error, exchange, context, 'the message')
    // The remote never took it (no connection, or it answered with a refusal): a retry may send it again.
    const answeredWithRefusal = exchange.status !== null && (exchange.status >= 300 || typeof (error as { code?: unknown }).code === 'number')
    if ((exchange.notSent || answeredWithRefusal) && !exchange.tooLarge) {
      await ledger.release(payload.task.id)
      return outcome
    }
    // Sent, and no task id came back: it is not sent again.
    return { kind: 'failed', code: 'agent-failed', detail: `the message was sent but no answer naming its task came back (${outcome.kind === 'failed' ? outcome.detail : outcome.kind === 'retry' ? outcome.detail : 'no answer'}); it is not sent again` }
  }
  if ('messageId' in result && !('status' in result)) return answered(partsText((result as Message).parts))
  const task = result as Task
  await ledger.remoteTask(payload.task.id, task.id, task.contextId)
  return followUp(task, endpoint, payload, agent, context)
}

/**
 * The outcome of a look at the remote task. A remote that waits on its caller gets a wait of the phase first
 * (INPUT_REQUIRED a question, AUTH_REQUIRED an authorization to approve), then the operator's reply on the same
 * task (marked as sent before it is sent: never twice).
 */
async function followUp(task: Task, endpoint: string, payload: TaskPayload, agent: AgentTarget, context: AdapterContext): Promise<DeliveryOutcome> {
  const outcome = outcomeOfTask(task, endpoint)
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
  const exchange: Exchange = { status: null, notSent: false, egressDenied: null, tooLarge: false }
  try {
    const client = await clientFor(endpoint, guardedFetch(context, agent.secret, exchange))
    const reply: Message = {
      messageId: `${taskId}:${wait.callId}`, contextId: task.contextId, taskId: task.id, role: Role.ROLE_USER,
      parts: [textPart(wait.answer)], metadata: undefined, extensions: [], referenceTaskIds: [],
    }
    const answered = await client.sendMessage({ tenant: '', message: reply, configuration: { acceptedOutputModes: ['text/plain'], taskPushNotificationConfig: undefined, returnImmediately: true, historyLength: 0 }, metadata: undefined }, { signal: context.signal })
    if ('status' in answered && 'artifacts' in answered) return outcomeOfTask(answered as Task, endpoint)
  } catch (error) {
    const failure = failureOf(error, exchange, context, 'the reply')
    if (failure.kind === 'failed') return failure
  }
  return outcome
}

async function followEarlier(
  entry: { remoteTaskId: string | null; remoteContextId: string | null; endpointUrl: string },
  payload: TaskPayload,
  agent: AgentTarget,
  context: AdapterContext,
  ledger: RemoteTaskLedger,
): Promise<DeliveryOutcome> {
  if (entry.remoteTaskId === null) {
    return { kind: 'failed', code: 'agent-failed', detail: 'the message was sent before (Tandem stopped or the call broke) and no answer naming its task came back; it is not sent again' }
  }
  return pollOverA2a({ remoteTaskId: entry.remoteTaskId, remoteContextId: entry.remoteContextId ?? '', endpoint: entry.endpointUrl }, payload, agent, context, ledger)
}

export async function pollOverA2a(state: JsonObject, payload: TaskPayload, agent: AgentTarget, context: AdapterContext, _ledger?: RemoteTaskLedger): Promise<DeliveryOutcome> {
  const exchange: Exchange = { status: null, notSent: false, egressDenied: null, tooLarge: false }
  const endpoint = String(state.endpoint)
  try {
    const client = await clientFor(endpoint, guardedFetch(context, agent.secret, exchange))
    const task = await client.getTask({ tenant: '', id: String(state.remoteTaskId), historyLength: 0 }, { signal: context.signal })
    return await followUp(task, endpoint, payload, agent, context)
  } catch (error) {
    return failureOf(error, exchange, context, 'the task look-up')
  }
}

/** One CancelTask of a remote task (the run ended, src/a2a/cancel.ts): null when done, else why not. */
export async function cancelRemoteTask(endpoint: string, remoteTaskId: string, secret: string | null, call: Pick<AdapterContext, 'fetch' | 'signal' | 'timeoutMs'>): Promise<string | null> {
  const exchange: Exchange = { status: null, notSent: false, egressDenied: null, tooLarge: false }
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
