// Live deltas of streaming messages (docs/streaming-and-usage.md): never stored, never replayed, never sent to
// webhooks — only handed to the SSE clients connected at the time. PostgreSQL: a NOTIFY on their own channel
// (every instance's hub listens), at once, outside any transaction; SQLite (one process): an in-process emitter.
import { EventEmitter } from 'node:events'
import { PostgresAdapter, sql, type Kysely } from 'kysely'
import type { Database } from '../db/database.js'

export const DELTAS_CHANNEL = 'tandem_deltas'

/** One message.delta: `text` starts at `offset` (UTF-16 code units, as JavaScript counts) of the message's text. */
export interface LiveDelta {
  streamId: string
  messageId: string
  offset: number
  text: string
  /** The first delta of a retried delivery: the message's text starts again from this delta. */
  reset?: true
}

// A NOTIFY payload is at most 8000 bytes: long deltas travel in pieces (JSON may write a character as 6 bytes).
const PIECE = 1000

const local = new EventEmitter()
local.setMaxListeners(0)

export function onLocalDelta(listener: (delta: LiveDelta) => void): () => void {
  local.on('delta', listener)
  return () => local.off('delta', listener)
}

export function pieces(delta: LiveDelta): LiveDelta[] {
  if (delta.text.length <= PIECE) return [delta]
  const out: LiveDelta[] = []
  for (let at = 0; at < delta.text.length; at += PIECE) {
    const piece: LiveDelta = { streamId: delta.streamId, messageId: delta.messageId, offset: delta.offset + at, text: delta.text.slice(at, at + PIECE) }
    if (at === 0 && delta.reset) piece.reset = true
    out.push(piece)
  }
  return out
}

/** Sends a delta to the stream's SSE clients on every instance. Best effort: a lost delta is repaired by message.completed. */
export async function publishDelta(db: Kysely<Database>, delta: LiveDelta): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) {
    local.emit('delta', delta)
    return
  }
  for (const piece of pieces(delta)) await sql`select pg_notify(${DELTAS_CHANNEL}, ${JSON.stringify(piece)})`.execute(db)
}

export function parseDelta(payload: string): LiveDelta | undefined {
  try {
    const value = JSON.parse(payload) as LiveDelta
    if (typeof value?.streamId === 'string' && typeof value.messageId === 'string' && typeof value.offset === 'number' && typeof value.text === 'string') return value
  } catch {
    // not ours
  }
  return undefined
}

/** The SSE frame of a delta: `event: message.delta` and no `id:` line (deltas are not in the log). */
export function deltaFrame(delta: LiveDelta): string {
  const data = { streamId: delta.streamId, messageId: delta.messageId, offset: delta.offset, text: delta.text, ...(delta.reset ? { reset: true } : {}) }
  return `event: message.delta\ndata: ${JSON.stringify(data)}\n\n`
}

/** Deltas of one message go out at most once per this many milliseconds per client (the feed coalesces them). */
export const COALESCE_MS = 20

/**
 * Coalesces the deltas of each message: the first goes out at once, those within COALESCE_MS of the last sent
 * are joined (adjacent text) and sent when the window ends. One per stream feed: every reader gets the same frames.
 */
export class DeltaCoalescer {
  private readonly pending = new Map<string, { delta: LiveDelta; timer: NodeJS.Timeout }>()
  private readonly lastSent = new Map<string, number>()

  private readonly send: (frame: string) => void

  constructor(send: (frame: string) => void) {
    this.send = send
  }

  push(delta: LiveDelta): void {
    const waiting = this.pending.get(delta.messageId)
    if (waiting) {
      const held = waiting.delta
      if (delta.reset) waiting.delta = { ...delta }
      else if (delta.offset === held.offset + held.text.length) held.text += delta.text
      else if (delta.offset < held.offset + held.text.length && delta.offset >= held.offset) held.text = held.text.slice(0, delta.offset - held.offset) + delta.text
      else {
        // Not adjacent (a piece lost on the way): what is held goes now, this one waits for the next window.
        this.flush(delta.messageId)
        this.hold({ ...delta })
      }
      return
    }
    const wait = (this.lastSent.get(delta.messageId) ?? -Infinity) + COALESCE_MS - performance.now()
    if (wait <= 0) this.emit(delta)
    else this.hold({ ...delta }, wait)
  }

  private hold(delta: LiveDelta, wait = COALESCE_MS): void {
    const timer = setTimeout(() => this.flush(delta.messageId), wait)
    timer.unref()
    this.pending.set(delta.messageId, { delta, timer })
  }

  private flush(messageId: string): void {
    const waiting = this.pending.get(messageId)
    if (!waiting) return
    clearTimeout(waiting.timer)
    this.pending.delete(messageId)
    this.emit(waiting.delta)
  }

  private emit(delta: LiveDelta): void {
    const at = performance.now()
    this.lastSent.set(delta.messageId, at)
    if (this.lastSent.size > 1000) for (const [id, sent] of this.lastSent) if (at - sent > COALESCE_MS) this.lastSent.delete(id)
    this.send(deltaFrame(delta))
  }

  close(): void {
    for (const { timer } of this.pending.values()) clearTimeout(timer)
    this.pending.clear()
  }
}
