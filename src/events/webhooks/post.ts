// One POST of a webhook body to a receiver: run webhooks (delivery.ts) and A2A push notifications
// (src/a2a/push-delivery.ts) both send this way. Through the egress guard, no redirect followed, within the
// webhook time-out; only the status counts (the body is not read, so a receiver that streams garbage cannot hold
// us). A failure is an outcome with a reason in words, never a throw, except when the process is shutting down.
import type { FastifyInstance } from 'fastify'
import { deadline } from '../../net/deadline.js'

export type Attempt = { ok: true; status: number } | { ok: false; status: number | null; error: string }

function describeFailure(error: unknown, timedOut: boolean, timeoutMs: number): string {
  const cause = (error as { cause?: { code?: string; message?: string; name?: string } }).cause
  const denied = (error as Error).name === 'EgressDeniedError' ? (error as Error) : cause?.name === 'EgressDeniedError' ? cause : undefined
  if (denied) return `${denied.message} (egress guard; TANDEM_EGRESS_ALLOW opens ranges)`
  if (timedOut) return `no answer within ${timeoutMs} ms`
  return `the connection failed (${cause?.code ?? cause?.message ?? (error as Error).message})`
}

export async function postWebhook(app: FastifyInstance, url: string, headers: Record<string, string>, body: string, shutdown: AbortSignal): Promise<Attempt> {
  const timeoutMs = app.config.webhookTimeoutMs
  const limit = deadline(timeoutMs, shutdown)
  try {
    const response = await app.egress.fetch(url, { method: 'POST', headers, body, redirect: 'manual', signal: limit.signal })
    await response.body?.cancel().catch(() => undefined)
    if (response.status >= 200 && response.status < 300) return { ok: true, status: response.status }
    if (response.status >= 300 && response.status < 400) return { ok: false, status: response.status, error: `the endpoint answered ${response.status} (a redirect; redirects are not followed)` }
    return { ok: false, status: response.status, error: `the endpoint answered ${response.status}` }
  } catch (error) {
    if (shutdown.aborted) throw error
    return { ok: false, status: null, error: describeFailure(error, limit.expired, timeoutMs) }
  } finally {
    limit.clear()
  }
}
