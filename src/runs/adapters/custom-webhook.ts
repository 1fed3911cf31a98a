// custom_webhook: POST the task payload to the agent's endpointUrl, signed with Standard Webhooks headers
// (webhook-id = the task id, stable across retries). The agent answers at once (2xx with output/error), or
// later at result.url (202, or 2xx without either), or streams (200 with `text/event-stream`: `data:` lines of
// `{ "delta": … }`, then one `{ "output": … }` or `{ "error": … }`). Retries are the engine's: this file only classifies.
import { createHmac, createSecretKey } from 'node:crypto'
import { Webhook } from 'standardwebhooks'
import { forEachEventData } from './sse-lines.js'
import { readAnswer } from '../answer.js'
import type { Adapter, AdapterContext, AgentTarget, DeliveryOutcome } from './adapter.js'

const MAX_ANSWER_BYTES = 1024 * 1024
const MAX_RETRY_AFTER_MS = 60 * 60 * 1000

/** `whsec_<base64>` is a Standard Webhooks key; any other secret signs with its UTF-8 bytes. */
export function signer(secret: string): Webhook {
  return secret.startsWith('whsec_') ? new Webhook(secret) : new Webhook(secret, { format: 'raw' })
}

/**
 * The `webhook-signature` header of a delivery: what `signer(secret).sign(id, timestamp, body)` gives, the HMAC
 * computed by node:crypto instead of the library's JavaScript SHA-256 (a few microseconds instead of a hundred for
 * a task payload). The library still reads the secret, so a secret it refuses fails the same way.
 */
export function signatureOf(secret: string, id: string, timestamp: Date, body: string): string {
  // As a KeyObject: createHmac given raw bytes spends more on telling them from a key object than on the HMAC.
  const key = createSecretKey((signer(secret) as unknown as { key: Uint8Array }).key)
  return `v1,${createHmac('sha256', key).update(`${id}.${Math.floor(timestamp.getTime() / 1000)}.${body}`).digest('base64')}`
}

/** Retry-After as seconds or an HTTP date → milliseconds, or undefined. */
export function retryAfterMs(header: string | null): number | undefined {
  if (!header) return undefined
  const ms = /^\d+$/.test(header.trim()) ? Number(header.trim()) * 1000 : Date.parse(header) - Date.now()
  return Number.isFinite(ms) ? Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS) : undefined
}

async function readLimited(response: Response): Promise<string | null> {
  if (!response.body) return ''
  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > MAX_ANSWER_BYTES) {
      await reader.cancel()
      return null
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks).toString('utf8')
}

function describeNetworkError(error: unknown, timeoutMs: number, signal: AbortSignal): string {
  if (signal.aborted) return `no answer within ${timeoutMs} ms`
  const cause = (error as { cause?: { code?: string; message?: string } }).cause
  return `the connection failed (${cause?.code ?? cause?.message ?? (error as Error).message ?? 'network error'})`
}

export const customWebhook: Adapter = {
  providerType: 'custom_webhook',
  unavailable(agent: AgentTarget) {
    if (!agent.endpointUrl) return 'the agent has no endpointUrl to deliver its tasks to'
    return null
  },
  async deliver(payload, agent, context): Promise<DeliveryOutcome> {
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
    let response: Response
    try {
      response = await context.fetch(agent.endpointUrl as string, { method: 'POST', headers, body, redirect: 'manual', signal: context.signal })
    } catch (error) {
      if ((error as Error).name === 'EgressDeniedError') return { kind: 'failed', code: 'egress-denied', detail: (error as Error).message }
      return { kind: 'retry', detail: describeNetworkError(error, context.timeoutMs, context.signal) }
    }
    const status = response.status
    if (status >= 300 && status < 400) {
      await response.body?.cancel()
      return { kind: 'failed', code: 'agent-rejected', detail: `the agent answered ${status} (a redirect); redirects are not followed` }
    }
    if (status === 408 || status === 429 || status >= 500) {
      await response.body?.cancel()
      return { kind: 'retry', detail: `the agent answered ${status}`, retryAfterMs: retryAfterMs(response.headers.get('retry-after')) }
    }
    if (status < 200 || status >= 300) {
      await response.body?.cancel()
      return { kind: 'failed', code: 'agent-rejected', detail: `the agent answered ${status}` }
    }
    if (status === 200 && /^text\/event-stream\b/i.test(response.headers.get('content-type') ?? '')) return readEventStream(response, context)
    let text: string | null
    try {
      text = await readLimited(response)
    } catch (error) {
      return { kind: 'retry', detail: describeNetworkError(error, context.timeoutMs, context.signal) }
    }
    if (status === 202) return { kind: 'accepted' }
    if (text === null) return { kind: 'failed', code: 'agent-failed', detail: `the agent's answer is larger than ${MAX_ANSWER_BYTES} bytes` }
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      return { kind: 'accepted' } // a 2xx that is not JSON ("OK") takes the task; the answer comes at result.url
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed) || !('output' in parsed || 'error' in parsed)) return { kind: 'accepted' }
    return answerOutcome(parsed)
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
 * start); one larger than MAX_ANSWER_BYTES fails the phase.
 */
async function readEventStream(response: Response, context: AdapterContext): Promise<DeliveryOutcome> {
  if (!response.body) return { kind: 'retry', detail: 'the agent\'s event stream was empty' }
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
    end = await forEachEventData(response.body, onData, MAX_ANSWER_BYTES)
  } catch (error) {
    return { kind: 'retry', detail: `the agent's event stream broke: ${describeNetworkError(error, context.timeoutMs, context.signal)}` }
  }
  if (end === 'too-large') return { kind: 'failed', code: 'agent-failed', detail: `the agent's event stream is larger than ${MAX_ANSWER_BYTES} bytes` }
  return outcome ?? { kind: 'retry', detail: 'the agent\'s event stream ended without an output or an error' }
}
