// The one back-off function of the service: the wait before retry number `retry` (1 for the first retry) is
// `baseMs × factor^(retry − 1)`, at most `maxMs`, plus up to `jitter` of it at random, and never less than a
// Retry-After the other side asked for. Each caller names its schedule:
//   agent deliveries   1 s × 2^n, ≤ 10 min, +25 % jitter, Retry-After honoured   (runs/tasks/delivery.ts)
//   webhook deliveries TANDEM_WEBHOOK_RETRY_BASE_MS × 4^n                        (events/webhooks/delivery.ts)
//   failed jobs        e^attempt s, ≤ e^10 s — graphile-worker's own, so both databases retry alike (jobs/sqlite.ts)
export interface Backoff {
  baseMs: number
  factor: number
  maxMs?: number
  /** Up to this fraction of the delay is added at random (0: none). */
  jitter?: number
}

export function backoffMs(schedule: Backoff, retry: number, retryAfterMs?: number): number {
  const raw = schedule.baseMs * schedule.factor ** Math.max(retry - 1, 0)
  const capped = Math.min(raw, schedule.maxMs ?? Number.POSITIVE_INFINITY)
  const jittered = Math.round(capped * (1 + Math.random() * (schedule.jitter ?? 0)))
  return Math.max(jittered, retryAfterMs ?? 0)
}

export const AGENT_DELIVERY_BACKOFF: Backoff = { baseMs: 1000, factor: 2, maxMs: 10 * 60 * 1000, jitter: 0.25 }
/** graphile-worker's schedule for failed jobs: e^attempt seconds up to attempt 10 (about 6 h). */
export const JOB_RETRY_BACKOFF: Backoff = { baseMs: Math.E * 1000, factor: Math.E, maxMs: Math.exp(10) * 1000 }

/** The longest Retry-After honoured: a vendor asking for more is retried after an hour. */
const MAX_RETRY_AFTER_MS = 60 * 60 * 1000

/**
 * A Retry-After header (seconds, or an HTTP date; the first value of a repeated header) as milliseconds from now,
 * within 0 and an hour, or undefined when there is none or it cannot be read.
 */
export function retryAfterMs(value: string | readonly string[] | null | undefined): number | undefined {
  const header = (typeof value === 'string' ? value : value?.[0])?.trim()
  if (!header) return undefined
  const seconds = Number(header)
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - Date.now()
  return Number.isFinite(ms) ? Math.round(Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS)) : undefined
}
