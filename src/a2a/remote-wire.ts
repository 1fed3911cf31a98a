// The wire to a remote A2A agent (docs/a2a.md, "A remote A2A agent as a phase"): the SDK's JSON-RPC client over a
// fetch that goes through the egress guard with the agent's key, every answer bounded (a JSON body read whole to
// MAX_BODY_BYTES; an event stream passed through as it comes, cut past MAX_STREAM_BYTES), and what a failed
// exchange means for the attempt.
import { AgentCard, type Part } from '@a2a-js/sdk'
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client'
import type { AdapterContext, DeliveryOutcome } from '../runs/adapters/adapter.js'

/** Bytes of a card or a JSON-RPC answer. */
export const MAX_BODY_BYTES = 1024 * 1024
/** Bytes of one event stream (SendStreamingMessage, SubscribeToTask); its lifetime is the dispatch time-out. */
export const MAX_STREAM_BYTES = 4 * 1024 * 1024
const DETAIL_CHARS = 300
// Errors of the connection itself: the request never reached the remote, so sending again cannot repeat it.
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH'])

/** What the last HTTP exchange came to: whether a response arrived, and its status. */
export interface Exchange {
  status: number | null
  notSent: boolean
  egressDenied: string | null
  tooLarge: boolean
}

export const newExchange = (): Exchange => ({ status: null, notSent: false, egressDenied: null, tooLarge: false })

/** fetch through the egress guard with the agent's key; bodies bounded as the file's header says. */
export function guardedFetch(context: AdapterContext, secret: string | null, exchange: Exchange): typeof fetch {
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
    if (response.body && response.status === 200 && response.headers.get('content-type')?.startsWith('text/event-stream')) {
      return new Response(boundedStream(response.body, exchange), { status: response.status, statusText: response.statusText, headers: response.headers })
    }
    const text = await readBounded(response)
    if (text === null) {
      exchange.tooLarge = true
      throw new Error('the answer is too large')
    }
    return new Response(text, { status: response.status, statusText: response.statusText, headers: response.headers })
  }
}

/** The stream as it comes, errored (and its connection dropped) once it passes MAX_STREAM_BYTES. */
function boundedStream(body: ReadableStream<Uint8Array>, exchange: Exchange): ReadableStream<Uint8Array> {
  let size = 0
  return body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      size += chunk.byteLength
      if (size > MAX_STREAM_BYTES) {
        exchange.tooLarge = true
        controller.error(new Error('the event stream is too large'))
        return
      }
      controller.enqueue(chunk)
    },
  }))
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

export const cut = (text: string) => (text.length > DETAIL_CHARS ? `${text.slice(0, DETAIL_CHARS)}…` : text)

/**
 * The JSON-RPC error code of a failed call, or null. The SDK's errors carry it as `envelopeCode`; an error event
 * inside a stream is wrapped (its `cause`).
 */
export function rpcCodeOf(error: unknown): { code: number; message: string } | null {
  for (let e = error as { envelopeCode?: unknown; code?: unknown; message?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 3; e = e.cause as typeof e, depth++) {
    const code = typeof e.envelopeCode === 'number' ? e.envelopeCode : typeof e.code === 'number' ? e.code : null
    if (code !== null) return { code, message: String(e.message ?? '') }
  }
  return null
}

/** What a failed exchange means for the attempt (never the secret: only codes and the remote's own error text). */
export function failureOf(error: unknown, exchange: Exchange, context: AdapterContext, what: string): DeliveryOutcome {
  if (exchange.egressDenied) return { kind: 'failed', code: 'egress-denied', detail: exchange.egressDenied }
  if (exchange.tooLarge) return { kind: 'failed', code: 'agent-failed', detail: `the remote agent's answer to ${what} is larger than the bound (${MAX_BODY_BYTES} bytes; an event stream ${MAX_STREAM_BYTES})` }
  const status = exchange.status
  if (status !== null && status >= 300) {
    if (status === 408 || status === 429 || status >= 500) return { kind: 'retry', detail: `the remote agent answered ${what} with ${status}` }
    return { kind: 'failed', code: 'agent-rejected', detail: `the remote agent answered ${what} with ${status}` }
  }
  const rpc = status !== null ? rpcCodeOf(error) : null
  if (rpc) {
    const detail = `the remote agent refused ${what}: ${rpc.code} ${cut(rpc.message)}`
    return rpc.code === -32603 ? { kind: 'retry', detail } : { kind: 'failed', code: 'agent-rejected', detail }
  }
  if (context.signal.aborted) return { kind: 'retry', detail: `no answer to ${what} within ${context.timeoutMs} ms` }
  if (status !== null) return { kind: 'failed', code: 'agent-failed', detail: `the remote agent's answer to ${what} is not a valid A2A answer` }
  return { kind: 'retry', detail: `the connection for ${what} failed` }
}

/** The remote answered the call with a refusal (an HTTP error status or a JSON-RPC error): it did not take it. */
export const refused = (error: unknown, exchange: Exchange) => exchange.status !== null && (exchange.status >= 300 || rpcCodeOf(error) !== null)

/** The SDK's client for one JSON-RPC 1.0 endpoint; `streaming` as the remote's card says. */
export function clientFor(url: string, fetchImpl: typeof fetch, streaming = false): Promise<Client> {
  const card = AgentCard.fromJSON({ name: 'remote', supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }], capabilities: { streaming } })
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl })] }))
  return factory.createFromAgentCard(card)
}

export const textPart = (value: string): Part => ({ content: { $case: 'text', value }, mediaType: 'text/plain', filename: '', metadata: undefined })

/** Data parts count as their JSON, url parts as the URL, raw as `[file <name>, <n> bytes]`. */
export const partsText = (parts: Part[]) =>
  parts.map((p) => {
    const content = p.content
    if (content?.$case === 'text') return content.value
    if (content?.$case === 'data') return JSON.stringify(content.value)
    if (content?.$case === 'url') return content.value
    if (content?.$case === 'raw') return `[file ${p.filename || 'unnamed'}, ${content.value.length} bytes]`
    return ''
  }).join('')
