// custom_webhook: POST the task payload to the agent's endpointUrl, signed with Standard Webhooks headers
// (webhook-id = the task id, stable across retries). The agent answers at once (2xx with output/error), or
// later at result.url (202, or 2xx without either), or streams (200 with `text/event-stream`: `data:` lines of
// `{ "delta": … }`, then one `{ "output": … }` or `{ "error": … }`). Retries are the engine's: this file only classifies.
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto'
import { pipeline, type Readable } from 'node:stream'
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib'
import type { Dispatcher } from 'undici'
import { Webhook } from 'standardwebhooks'
import { forEachEventData } from './sse-lines.js'
import { readAnswer } from '../tasks/answer.js'
import { retryAfterMs } from '../../net/backoff.js'
import { keptOrMade } from '../../kept.js'
import type { Adapter, AdapterContext, AgentTarget, DeliveryOutcome } from './adapter.js'
import { deliverOverA2a, pollOverA2a, protocolOf } from '../../a2a/client.js'
import { MAX_SIGNING_KEYS, MAX_WEBHOOK_ANSWER_BYTES } from '../limits.js'

/** `whsec_<base64>` is a Standard Webhooks key; any other secret signs with its UTF-8 bytes. */
export function signer(secret: string): Webhook {
  return secret.startsWith('whsec_') ? new Webhook(secret) : new Webhook(secret, { format: 'raw' })
}

/** Signing keys by secret: reading a secret (base64) and making its KeyObject cost more than the HMAC. Bounded. */
const signingKeys = new Map<string, KeyObject>()

// As a KeyObject: createHmac given raw bytes spends more on telling them from a key object than on the HMAC.
const signingKey = (secret: string): KeyObject =>
  keptOrMade(signingKeys, secret, MAX_SIGNING_KEYS, () => createSecretKey((signer(secret) as unknown as { key: Uint8Array }).key))

/**
 * The `webhook-signature` header of a delivery: what `signer(secret).sign(id, timestamp, body)` gives, the HMAC
 * computed by node:crypto instead of the library's JavaScript SHA-256 (a few microseconds instead of a hundred for
 * a task payload). The library still reads the secret, so a secret it refuses fails the same way.
 */
export function signatureOf(secret: string, id: string, timestamp: Date, body: string): string {
  return `v1,${createHmac('sha256', signingKey(secret)).update(`${id}.${Math.floor(timestamp.getTime() / 1000)}.${body}`).digest('base64')}`
}

/** One value of a response header (undici gives a repeated header as an array). */
function headerOf(headers: Dispatcher.ResponseData['headers'], name: string): string | undefined {
  const value = headers[name]
  return Array.isArray(value) ? value[0] : value
}

/**
 * The answer's body, decoded when the agent compressed it: the request sends no Accept-Encoding, which allows any
 * coding (RFC 9110 §12.5.3), and undici's request, unlike fetch, leaves decoding to its caller.
 */
function decodedBody(response: Dispatcher.ResponseData): AsyncIterable<Uint8Array> {
  const coding = headerOf(response.headers, 'content-encoding')?.trim().toLowerCase()
  const body = response.body as unknown as Readable
  const decoder = coding === 'gzip' || coding === 'x-gzip' ? createGunzip() : coding === 'deflate' ? createInflate() : coding === 'br' ? createBrotliDecompress() : null
  if (!decoder) return body
  // pipeline, not pipe: the body's error (the deadline aborting it, a reset) fails the decoder too, and a read that
  // stops early (too large, the stream's end event) destroys the body as well, so no delivery waits for ever and no
  // socket is left half read.
  return pipeline(body, decoder, () => {})
}

/** The body as text, or null past MAX_WEBHOOK_ANSWER_BYTES (decoded bytes: a small compressed answer may not unpack into a large one). */
async function readLimited(body: AsyncIterable<Uint8Array>): Promise<string | null> {
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of body) {
    size += chunk.byteLength
    if (size > MAX_WEBHOOK_ANSWER_BYTES) return null // leaving the loop destroys the stream
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}

function describeNetworkError(error: unknown, timeoutMs: number, signal: AbortSignal): string {
  if (signal.aborted) return `no answer within ${timeoutMs} ms`
  const { code, cause } = error as { code?: string; cause?: { code?: string; message?: string } }
  return `the connection failed (${cause?.code ?? (code?.startsWith('UND_ERR') ? undefined : code) ?? cause?.message ?? (error as Error).message ?? 'network error'})`
}

export const customWebhook: Adapter = {
  providerType: 'custom_webhook',
  unavailable(agent: AgentTarget) {
    if (!agent.endpointUrl) return 'the agent has no endpointUrl to deliver its tasks to'
    return null
  },
  async deliver(payload, agent, context): Promise<DeliveryOutcome> {
    // config.protocol "a2a": the endpointUrl is a remote A2A agent's card (docs/a2a.md).
    const protocol = protocolOf(agent)
    if (protocol === null) return { kind: 'failed', code: 'agent-misconfigured', detail: 'config.protocol must be "webhook" (the default) or "a2a"' }
    if (protocol === 'a2a') {
      if (!context.a2aLedger) return { kind: 'failed', code: 'agent-misconfigured', detail: 'this Tandem cannot call A2A agents here' }
      return deliverOverA2a(payload, agent, context, context.a2aLedger)
    }
    const body = JSON.stringify(payload)
    const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'Tandem-Runs/1' }
    if (agent.secret !== null) {
      const timestamp = new Date()
      headers['webhook-id'] = payload.task.id
      headers['webhook-timestamp'] = String(Math.floor(timestamp.getTime() / 1000))
      headers['webhook-signature'] = signatureOf(agent.secret, payload.task.id, timestamp, body)
      if (agent.authMode === 'api_key') headers.authorization = `Bearer ${agent.secret}`
    } else {
      headers['webhook-id'] = payload.task.id
      headers['webhook-timestamp'] = String(Math.floor(Date.now() / 1000))
    }
    if (context.traceparent) headers.traceparent = context.traceparent
    let response: Dispatcher.ResponseData
    try {
      // undici's request, not fetch: no WHATWG Request, Headers and Response per delivery (a third of its cost).
      response = await context.request(agent.endpointUrl as string, { method: 'POST', headers, body, signal: context.signal })
    } catch (error) {
      if ((error as Error).name === 'EgressDeniedError') return { kind: 'failed', code: 'egress-denied', detail: (error as Error).message }
      return { kind: 'retry', detail: describeNetworkError(error, context.timeoutMs, context.signal) }
    }
    const status = response.statusCode
    const discard = () => response.body.dump().catch(() => undefined)
    if (status >= 300 && status < 400) {
      await discard()
      return { kind: 'failed', code: 'agent-rejected', detail: `the agent answered ${status} (a redirect); redirects are not followed` }
    }
    if (status === 408 || status === 429 || status >= 500) {
      await discard()
      return { kind: 'retry', detail: `the agent answered ${status}`, retryAfterMs: retryAfterMs(response.headers['retry-after']) }
    }
    if (status < 200 || status >= 300) {
      await discard()
      return { kind: 'failed', code: 'agent-rejected', detail: `the agent answered ${status}` }
    }
    if (status === 200 && /^text\/event-stream\b/i.test(headerOf(response.headers, 'content-type') ?? '')) return readEventStream(decodedBody(response), context)
    let text: string | null
    try {
      text = await readLimited(decodedBody(response))
    } catch (error) {
      return { kind: 'retry', detail: describeNetworkError(error, context.timeoutMs, context.signal) }
    }
    if (status === 202) return { kind: 'accepted' }
    if (text === null) return { kind: 'failed', code: 'agent-failed', detail: `the agent's answer is larger than ${MAX_WEBHOOK_ANSWER_BYTES} bytes` }
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      return { kind: 'accepted' } // a 2xx that is not JSON ("OK") takes the task; the answer comes at result.url
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed) || !('output' in parsed || 'error' in parsed)) return { kind: 'accepted' }
    return answerOutcome(parsed)
  },
  /** Only an A2A agent's remote task is polled (its GetTask). */
  async poll(state, payload, agent, context): Promise<DeliveryOutcome> {
    return pollOverA2a(state, payload, agent, context)
  },
}

function answerOutcome(parsed: unknown): DeliveryOutcome {
  const answer = readAnswer(parsed)
  if (answer.kind === 'output') return { kind: 'answered', output: answer.output, usage: answer.usage }
  if (answer.kind === 'error') return { kind: 'failed', code: 'agent-failed', detail: `the agent reported: ${answer.detail}` }
  return { kind: 'failed', code: 'agent-failed', detail: `the agent's answer is not valid: ${answer.errors.map((e) => `${e.pointer} ${e.detail}`).join('; ')}` }
}

/**
 * A streamed answer: Server-Sent Events whose `data:` is JSON — `{ "delta": "<text>" }` any number of times
 * (each handed to `onDelta`), then `{ "output": … }` or `{ "error": … }` (as for /result), which ends it. A stream
 * that breaks or ends before that is a transient failure (the delivery is retried and streams again from the
 * start); one larger than MAX_WEBHOOK_ANSWER_BYTES fails the phase.
 */
async function readEventStream(body: AsyncIterable<Uint8Array>, context: AdapterContext): Promise<DeliveryOutcome> {
  let outcome: DeliveryOutcome | null = null
  const onData = (payload: string): boolean => {
    let parsed: unknown
    try {
      parsed = JSON.parse(payload)
    } catch {
      return false // not JSON (a "[DONE]", a ping): not ours to read
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return false
    const event = parsed as Record<string, unknown>
    if (typeof event.delta === 'string') {
      context.onDelta?.(event.delta)
      return false
    }
    if ('output' in event || 'error' in event) outcome = answerOutcome(event)
    return outcome !== null
  }
  let end: Awaited<ReturnType<typeof forEachEventData>>
  try {
    end = await forEachEventData(body, onData, MAX_WEBHOOK_ANSWER_BYTES)
  } catch (error) {
    return { kind: 'retry', detail: `the agent's event stream broke: ${describeNetworkError(error, context.timeoutMs, context.signal)}` }
  }
  if (end === 'too-large') return { kind: 'failed', code: 'agent-failed', detail: `the agent's event stream is larger than ${MAX_WEBHOOK_ANSWER_BYTES} bytes` }
  return outcome ?? { kind: 'retry', detail: 'the agent\'s event stream ended without an output or an error' }
}
