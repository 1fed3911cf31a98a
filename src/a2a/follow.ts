// Following one task from any instance: a reader of the run's stream on the instance's event hub (NOTIFY on
// PostgreSQL, so a change committed by another instance wakes it too). Every event of the run wakes the follower,
// which reads the run again from the database; live deltas of the run's streaming messages are passed on as they
// come. Nothing is kept in memory beyond the reader itself: the database is the truth.
import type { FastifyInstance } from 'fastify'
import type { FeedReader } from '../events/hub.js'
import type { StreamEvent } from '../events/store.js'

export interface LiveMessageDelta {
  messageId: string
  offset: number
  text: string
  reset: boolean
}

export type FollowSignal = { kind: 'changed' } | { kind: 'delta'; delta: LiveMessageDelta } | { kind: 'closed' }

// At most this many deltas wait for a slow consumer; past it they are dropped (the whole message follows at its end).
const MAX_QUEUED = 1000

/** Relevant to the run: its own events, its tool calls', and messages (an output arrives with a run.updated). */
function concerns(event: StreamEvent, runId: string): boolean {
  const data = event.data as { id?: string; runId?: string } | null
  if (event.type === 'run.created' || event.type === 'run.updated') return data?.id === runId
  if (event.type === 'tool_call.created' || event.type === 'tool_call.updated') return data?.runId === runId
  return false
}

/**
 * Wakes on every change of the run; `next()` resolves with the next signal. A `changed` signal stands for all
 * changes since the last one (they are coalesced): the consumer reads the run again.
 */
export class TaskFollower implements FeedReader {
  private changed = true
  private closed = false
  private readonly deltas: LiveMessageDelta[] = []
  private wake: (() => void) | null = null
  private readonly unsubscribe: () => void

  private readonly runId: string

  constructor(app: FastifyInstance, streamId: string, runId: string) {
    this.runId = runId
    this.unsubscribe = app.events.subscribe(streamId, this)
  }

  receive(events: StreamEvent[]): void {
    if (events.some((event) => concerns(event, this.runId))) {
      this.changed = true
      this.notify()
    }
  }

  /** The stream's new feed starts where it found the log: a change before that may have come after the consumer's read. */
  started(): void {
    this.changed = true
    this.notify()
  }

  receiveDelta(frame: string): void {
    const json = frame.slice(frame.indexOf('data: ') + 6).trim()
    try {
      const data = JSON.parse(json) as { messageId: string; offset: number; text: string; reset?: boolean }
      if (this.deltas.length >= MAX_QUEUED) return
      this.deltas.push({ messageId: data.messageId, offset: data.offset, text: data.text, reset: data.reset === true })
      this.notify()
    } catch {
      // not a delta frame
    }
  }

  close(): void {
    if (this.closed) return
    this.closed = true
    this.unsubscribe()
    this.notify()
  }

  private notify(): void {
    const wake = this.wake
    this.wake = null
    wake?.()
  }

  /** The next signal, or `null` after `ms` without one. */
  async next(ms: number): Promise<FollowSignal | null> {
    for (;;) {
      if (this.closed) return { kind: 'closed' }
      const delta = this.deltas.shift()
      if (delta) return { kind: 'delta', delta }
      if (this.changed) {
        this.changed = false
        return { kind: 'changed' }
      }
      if (ms <= 0) return null
      const woke = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), ms)
        timer.unref()
        this.wake = () => {
          clearTimeout(timer)
          resolve(true)
        }
      })
      if (!woke) return null
    }
  }
}
