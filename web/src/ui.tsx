// Small pieces every view uses: problem messages, field errors tied to their fields, loading and empty
// states, status badges and relative times.
import { useEffect, useId, useState, type ReactNode } from 'react'
import { ApiError } from './api/client'

/** A clear sentence for an error from the API (403/404/409/412/… or the network). */
export function describeError(error: unknown): string {
  if (error instanceof ApiError) {
    const detail = error.problem.detail ?? error.problem.title ?? ''
    switch (error.status) {
      case 401: return 'You are not signed in, or your key is no longer valid.'
      case 403: return `Not allowed: ${detail}`
      case 404: return `Not found: ${detail}`
      case 409: return `Conflict: ${detail}`
      default: return detail || `The server answered ${error.status}.`
    }
  }
  return error instanceof Error ? `Could not reach Tandem: ${error.message}` : String(error)
}

/** An error that belongs to no field; with `onRetry`, a "Try again" button (for reads that failed). */
export function ErrorMessage({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  if (!error) return null
  return (
    <div role="alert" className="error">
      {describeError(error)}
      {onRetry ? <div className="actions"><button type="button" className="secondary small" onClick={onRetry}>Try again</button></div> : null}
    </div>
  )
}

/** Props for an input named by `pointer`, and the error text beside it (aria-describedby ties the two). */
export function useField(error: unknown, pointer: string) {
  const id = useId()
  const message = error instanceof ApiError ? error.fieldError(pointer) : undefined
  return {
    input: { id, 'aria-invalid': message ? true : undefined, 'aria-describedby': message ? `${id}-error` : undefined },
    describedBy: message ? `${id}-error` : undefined,
    message: message ? <span id={`${id}-error`} className="field-error">{message}</span> : null,
  }
}

export function Field({ label, field, children }: { label: string; field: ReturnType<typeof useField>; children: ReactNode }) {
  return (
    <div className="field">
      <label htmlFor={field.input.id}>{label}</label>
      {children}
      {field.message}
    </div>
  )
}

export function Loading({ what = '' }: { what?: string }) {
  return <p className="loading" aria-busy="true" aria-live="polite">Loading{what ? ` ${what}` : ''}…</p>
}

/** An empty list that says what to do next. */
export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return <div className="empty"><strong>{title}</strong>{children}</div>
}

export function shortId(id: string) {
  return id.slice(-8)
}

type Tone = 'neutral' | 'info' | 'warning' | 'success' | 'danger' | 'agent'
const STATUS: Record<string, { label: string; tone: Tone }> = {
  queued: { label: 'Queued', tone: 'neutral' },
  pending: { label: 'Pending', tone: 'neutral' },
  running: { label: 'Running', tone: 'info' },
  waiting: { label: 'Waiting', tone: 'warning' },
  awaiting_decision: { label: 'Awaiting decision', tone: 'warning' },
  awaiting_tool_approval: { label: 'Awaiting tool approval', tone: 'warning' },
  awaiting_input: { label: 'Awaiting an answer', tone: 'warning' },
  streaming: { label: 'Writing…', tone: 'info' },
  succeeded: { label: 'Succeeded', tone: 'success' },
  failed: { label: 'Failed', tone: 'danger' },
  rejected: { label: 'Rejected', tone: 'danger' },
  canceled: { label: 'Canceled', tone: 'neutral' },
  approve: { label: 'Approved', tone: 'success' },
  revise: { label: 'Changes requested', tone: 'warning' },
  reject: { label: 'Rejected', tone: 'danger' },
}

/** A run's, a phase's or a decision's status as a badge; the raw status stays a class for styling and tests. */
export function StatusBadge({ status, label }: { status: string; label?: string }) {
  const known = STATUS[status] ?? { label: status, tone: 'neutral' as Tone }
  return <span className={`badge status tone-${known.tone} ${status}`}>{label ?? known.label}</span>
}

export function Badge({ tone, children }: { tone: Tone; children: ReactNode }) {
  return <span className={`badge plain tone-${tone}`}>{children}</span>
}

const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto', style: 'long' })
const STEPS: Array<[Intl.RelativeTimeFormatUnit, number]> = [['second', 60], ['minute', 60], ['hour', 24], ['day', 7], ['week', 4.35], ['month', 12], ['year', Infinity]]

/** "3 minutes ago", "in 2 hours"; under ten seconds, "just now". */
export function relativeTime(iso: string, now = Date.now()): string {
  let value = (new Date(iso).getTime() - now) / 1000
  if (Math.abs(value) < 10) return 'just now'
  for (const [unit, size] of STEPS) {
    if (Math.abs(value) < size) return relative.format(Math.round(value), unit)
    value /= size
  }
  return new Date(iso).toLocaleString()
}

/** A duration in words: "850 ms", "42 s", "3 min 5 s", "2 h 10 min". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`
  const s = Math.round(ms / 1000)
  if (s < 60) return `${s} s`
  const m = Math.floor(s / 60)
  if (m < 60) return s % 60 ? `${m} min ${s % 60} s` : `${m} min`
  const h = Math.floor(m / 60)
  return m % 60 ? `${h} h ${m % 60} min` : `${h} h`
}

let tick = Date.now()
const listeners = new Set<(now: number) => void>()
let timer: ReturnType<typeof setInterval> | undefined

/** The current time, refreshed every 15 s for every relative time on the page at once (one timer, only while shown). */
export function useNow(): number {
  const [now, setNow] = useState(tick)
  useEffect(() => {
    listeners.add(setNow)
    timer ??= setInterval(() => {
      tick = Date.now()
      for (const listener of listeners) listener(tick)
    }, 15000)
    return () => {
      listeners.delete(setNow)
      if (listeners.size === 0) {
        clearInterval(timer)
        timer = undefined
      }
    }
  }, [])
  return now
}

export function RelativeTime({ iso, prefix = '' }: { iso: string; prefix?: string }) {
  const now = useNow()
  const exact = new Date(iso).toLocaleString(undefined, { dateStyle: 'full', timeStyle: 'medium' })
  return <time dateTime={iso} title={exact}>{prefix}{relativeTime(iso, Math.max(now, Date.now()))}</time>
}
