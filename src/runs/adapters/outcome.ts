// How the vendor adapters turn what happened on the wire into a DeliveryOutcome, the same way for every vendor:
// 401/403 → agent-rejected, 408/429/5xx and network errors → retry, other statuses → agent-rejected,
// an empty or malformed answer → agent-failed, a refused address → egress-denied. No detail ever holds the secret.
import type { AdapterContext, AgentTarget, DeliveryOutcome } from './adapter.js'
import { retryAfterMs } from '../../net/backoff.js'

/** The vendor's base address: the agent's endpointUrl when set (without a trailing slash), else the public one. */
export function vendorBase(agent: AgentTarget, publicBase: string): string {
  return (agent.endpointUrl ?? publicBase).replace(/\/+$/, '')
}

/** A config value that must be a non-empty string, or null. */
export function configString(agent: AgentTarget, key: string): string | null {
  const value = agent.config[key]
  return typeof value === 'string' && value.trim() !== '' ? value : null
}

/** `config.maxTokens` when it is a positive integer, else null. */
export function maxTokens(config: Record<string, unknown>): number | null {
  const value = config.maxTokens
  return Number.isInteger(value) && (value as number) > 0 ? (value as number) : null
}

/** Removes the secret (and, for Basic auth, its encoded form) from a text that may echo what we sent. */
export function redact(text: string, secret: string | null): string {
  if (!secret) return text
  return text.split(secret).join('…')
}

/** The outcome of a non-2xx HTTP status from the vendor. */
export function statusOutcome(vendor: string, status: number, retryAfter?: string | null): DeliveryOutcome {
  if (status === 401 || status === 403) {
    return { kind: 'failed', code: 'agent-rejected', detail: `${vendor} refused the credential (status ${status}).` }
  }
  if (status === 408 || status === 429 || status >= 500) {
    const wait = retryAfterMs(retryAfter)
    return { kind: 'retry', detail: `${vendor} answered with status ${status}.`, ...(wait === undefined ? {} : { retryAfterMs: wait }) }
  }
  if (status >= 300 && status < 400) {
    return { kind: 'failed', code: 'agent-rejected', detail: `${vendor} answered with a redirect (status ${status}), which is never followed.` }
  }
  return { kind: 'failed', code: 'agent-rejected', detail: `${vendor} refused the request (status ${status}).` }
}

/** True for the egress guard's refusal, whichever layer (fetch, lookup, a client library) passes it on. */
export function isEgressDenied(error: unknown): boolean {
  for (let cause: unknown = error, depth = 0; cause && depth < 6; depth++) {
    const code = (cause as { code?: unknown }).code
    const name = (cause as { name?: unknown }).name
    if (code === 'EGRESS_DENIED' || code === 'ERR_EGRESS_DENIED' || name === 'EgressDeniedError') return true
    cause = (cause as { cause?: unknown }).cause
  }
  return false
}

/** The outcome of an exception while talking to the vendor: time-out, refused address or network error. */
export function errorOutcome(vendor: string, error: unknown, context: AdapterContext): DeliveryOutcome {
  if (isEgressDenied(error)) {
    return { kind: 'failed', code: 'egress-denied', detail: `The address of ${vendor} is not allowed by the egress guard.` }
  }
  if (context.signal.aborted) {
    return { kind: 'retry', detail: `${vendor} did not answer within ${context.timeoutMs} ms.` }
  }
  const code = (error as { cause?: { code?: unknown } })?.cause?.code ?? (error as { code?: unknown })?.code
  return { kind: 'retry', detail: `${vendor} could not be reached${typeof code === 'string' ? ` (${code})` : ''}.` }
}

export function malformed(vendor: string, what: string): DeliveryOutcome {
  return { kind: 'failed', code: 'agent-failed', detail: `${vendor} ${what}.` }
}

/**
 * One JSON call through the context's fetch: the parsed body of a 2xx answer, or the outcome that ends the
 * delivery (status, network, malformed JSON).
 */
export async function callJson(
  vendor: string,
  context: AdapterContext,
  url: string,
  init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: unknown },
): Promise<{ ok: true; body: unknown } | { ok: false; outcome: DeliveryOutcome }> {
  let response: Response
  try {
    response = await context.fetch(url, {
      method: init.method,
      headers: { accept: 'application/json', ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...traceHeaders(context), ...init.headers },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      redirect: 'manual',
      signal: context.signal,
    })
  } catch (error) {
    return { ok: false, outcome: errorOutcome(vendor, error, context) }
  }
  let text: string
  try {
    text = await response.text()
  } catch (error) {
    return { ok: false, outcome: errorOutcome(vendor, error, context) }
  }
  if (response.status < 200 || response.status >= 300) {
    return { ok: false, outcome: statusOutcome(vendor, response.status, response.headers.get('retry-after')) }
  }
  try {
    return { ok: true, body: JSON.parse(text) }
  } catch {
    return { ok: false, outcome: malformed(vendor, 'answered with something that is not JSON') }
  }
}

export function traceHeaders(context: AdapterContext): Record<string, string> {
  return context.traceparent ? { traceparent: context.traceparent } : {}
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
