// One Server-Sent Events connection on a stream: replay from the table after the client's position, then
// live events from the instance's feed, each exactly once and in order. At the seam a reader may receive
// events it already sent (skipped) or see a hole (filled from the table). A client that does not read
// is dropped once its unsent output passes the limit; it resumes with Last-Event-ID. The replay reads batches of at
// most 1 MiB (src/events/budget.ts) written as stored, and yields the loop between batches, so replays of a large
// stream hold neither the event loop nor more than a batch of memory per client.
import type { ServerResponse } from 'node:http'
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import type { EventHub, FeedReader } from './hub.js'
import { setImmediate as nextTurn } from 'node:timers/promises'
import type { StreamEvent } from './store.js'
import { readEventSlice, type RawEvent } from './budget.js'

const REPLAY_BATCH = 500

// A feed hands the same event objects to all its readers: each frame is serialised once, not once per client.
const frames = new WeakMap<StreamEvent, string>()

export function sseFrame(event: StreamEvent): string {
  let frame = frames.get(event)
  if (frame === undefined) {
    frame = `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`
    frames.set(event, frame)
  }
  return frame
}

function rawFrame(event: RawEvent): string {
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${event.json}\n\n`
}

export interface SseOptions {
  keepAliveMs: number
  maxBufferBytes: number
  /** The stream ends after this long (a slot is not held for ever); the client reconnects with Last-Event-ID. */
  maxLifetimeMs: number
}

export class SseConnection implements FeedReader {
  private lastSent: number
  private replaying = false
  private pending = false
  private ended = false
  private readonly keepAlive: NodeJS.Timeout
  private readonly lifetime: NodeJS.Timeout
  private readonly unsubscribe: () => void

  private readonly raw: ServerResponse
  private readonly db: Kysely<Database>
  private readonly streamId: string
  private readonly options: SseOptions
  private readonly log: FastifyBaseLogger

  constructor(
    raw: ServerResponse,
    db: Kysely<Database>,
    streamId: string,
    after: number,
    hub: EventHub,
    options: SseOptions,
    log: FastifyBaseLogger,
  ) {
    this.raw = raw
    this.db = db
    this.streamId = streamId
    this.options = options
    this.log = log
    this.lastSent = after
    this.unsubscribe = hub.subscribe(streamId, this)
    this.keepAlive = setInterval(() => this.write(': keep-alive\n\n'), options.keepAliveMs)
    this.keepAlive.unref()
    this.lifetime = setTimeout(() => this.close(), options.maxLifetimeMs)
    this.lifetime.unref()
    raw.on('close', () => this.close())
    this.replay()
  }

  receive(events: StreamEvent[]): void {
    if (this.ended) return
    if (this.replaying) {
      this.pending = true
      return
    }
    // The new events in one write (one system call per client per wake-up).
    let chunk = ''
    let last = this.lastSent
    for (const event of events) {
      const id = Number(event.id)
      if (id <= last) continue
      if (id > last + 1) break
      chunk += sseFrame(event)
      last = id
    }
    if (chunk !== '' && this.write(chunk)) this.lastSent = last
    const newest = Number(events[events.length - 1]?.id)
    if (!this.ended && newest > this.lastSent) this.replay()
  }

  /** The feed starts after `lastId`: events up to it that the replay has not sent are read from the table. */
  started(lastId: number): void {
    if (this.ended || lastId <= this.lastSent) return
    if (this.replaying) this.pending = true
    else this.replay()
  }

  /** A live delta: written at once, replaying or not (deltas are not ordered with the log's events). */
  receiveDelta(frame: string): void {
    this.write(frame)
  }

  /** Reads from the table until caught up, then goes live. */
  private replay(): void {
    this.replaying = true
    this.catchUp().catch((error: unknown) => {
      this.log.error({ err: error, streamId: this.streamId }, 'replaying events failed; closing the stream')
      this.close()
    })
  }

  private async catchUp(): Promise<void> {
    for (;;) {
      this.pending = false
      const slice = await readEventSlice(this.db, this.streamId, this.lastSent, REPLAY_BATCH)
      for (const event of slice.events) {
        // Replay no faster than the client reads: a long replay never counts as a slow client.
        if (this.raw.writableNeedDrain) await this.drained()
        if (this.ended) return
        if (event.id === this.lastSent + 1 && this.write(rawFrame(event))) this.lastSent = event.id
      }
      if (this.ended) return
      // Live from here: in the same step as the last look at `pending`, so no event handed over in between is lost
      // (a `then` on the replay would run a turn later, when a feed's delivery may already have been set aside).
      if (!slice.more && !this.pending) {
        this.replaying = false
        return
      }
      // Another batch: let other requests have the loop first.
      await nextTurn()
    }
  }

  private drained(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.raw.off('drain', done).off('close', done)
        resolve()
      }
      this.raw.on('drain', done).on('close', done)
    })
  }

  /** Writes unless the client has left more than the limit unread (then drops it: it resumes from its last id). */
  private write(chunk: string): boolean {
    if (this.ended) return false
    if (this.raw.writableLength > this.options.maxBufferBytes) {
      this.log.warn({ streamId: this.streamId, buffered: this.raw.writableLength }, 'dropping a slow event-stream client')
      this.ended = true
      this.cleanUp()
      this.raw.destroy()
      return false
    }
    this.raw.write(chunk)
    return true
  }

  close(): void {
    if (this.ended) return
    this.ended = true
    this.cleanUp()
    this.raw.end()
  }

  private cleanUp(): void {
    clearInterval(this.keepAlive)
    clearTimeout(this.lifetime)
    this.unsubscribe()
  }
}
