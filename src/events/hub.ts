// The instance's fan-out: one feed per stream that has live readers. A wake-up (NOTIFY on PostgreSQL, the
// in-process emitter on SQLite) makes the feed read the new rows from the table once and hand them to
// every reader of the stream; readers fill any hole they see from the table themselves. A new feed starts at the
// stream's head and tells the readers already there where that is (FeedReader.started); a read that fails is
// tried again shortly, so the events that woke it are not left for the next wake-up. One listener per instance,
// whatever the number of clients.
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { streamHead, type StreamEvent } from './store.js'
import { readEventSlice } from './budget.js'
import { onLocalWake } from './wakeups.js'
import { listenForEvents, type EventListener } from './pg-listener.js'
import { DeltaCoalescer, onLocalDelta, type LiveDelta } from './deltas.js'

export interface FeedReader {
  /** New events of the stream, in order (possibly ones the reader already has). */
  receive(events: StreamEvent[]): void
  /** The hub is closing: end the connection. */
  close(): void
  /** A live message.delta frame (no id: not in the log). Readers that leave it out get no deltas. */
  receiveDelta?(frame: string): void
  /**
   * The feed has read the stream's head, `lastId`, and hands over only later events. Called once, for the readers
   * that subscribed before that read: an event up to `lastId` that committed after such a reader's own first read
   * reaches it only if it reads again. (A reader that joins a feed already started misses nothing: the feed has
   * handed over everything up to its position, which committed before the reader joined.)
   */
  started?(lastId: number): void
}

const READ_BATCH = 500
/** After a failed read of the table (the database busy or away), the feed reads again this much later. */
const RETRY_MS = 500

class StreamFeed {
  readonly readers = new Set<FeedReader>()
  private lastRead = -1
  private draining = false
  private again = false
  private retry: NodeJS.Timeout | undefined
  private stopped = false
  /** Live deltas of the stream's streaming messages, coalesced once for all readers. */
  readonly deltas = new DeltaCoalescer((frame) => {
    for (const reader of this.readers) reader.receiveDelta?.(frame)
  })

  private readonly db: Kysely<Database>
  private readonly streamId: string
  private readonly log: FastifyBaseLogger

  constructor(
    db: Kysely<Database>,
    streamId: string,
    log: FastifyBaseLogger,
  ) {
    this.db = db
    this.streamId = streamId
    this.log = log
  }

  wake(): void {
    if (this.stopped) return
    clearTimeout(this.retry)
    this.retry = undefined
    if (this.draining) {
      this.again = true
      return
    }
    this.draining = true
    this.drain().then(
      () => this.drained(true),
      (error: unknown) => {
        this.log.error({ err: error, streamId: this.streamId }, `reading new events failed; reading again in ${RETRY_MS} ms`)
        this.drained(false)
      },
    )
  }

  /** A drain ended: another if a wake-up came meanwhile, or, after a failure, a retry (the events that woke it are still to be read). */
  private drained(read: boolean): void {
    this.draining = false
    if (this.again) {
      this.again = false
      this.wake()
    } else if (!read && !this.stopped) {
      this.retry = setTimeout(() => this.wake(), RETRY_MS)
      this.retry.unref()
    }
  }

  /** No reader is left, or the hub closes: no more reads or deltas. */
  stop(): void {
    this.stopped = true
    clearTimeout(this.retry)
    this.deltas.close()
  }

  private async drain(): Promise<void> {
    // A new feed starts at the stream's head: its readers catch up to it from the table on their own. The head is
    // read after they subscribed, and possibly after their own first read: they are told where the feed starts.
    if (this.lastRead < 0) {
      const { lastId } = await streamHead(this.db, this.streamId)
      this.lastRead = lastId
      for (const reader of this.readers) reader.started?.(lastId)
    }
    for (;;) {
      // At most READ_BATCH events and 1 MiB at a time (src/events/budget.ts).
      const slice = await readEventSlice(this.db, this.streamId, this.lastRead, READ_BATCH)
      const events = slice.events.map((event) => JSON.parse(event.json) as StreamEvent)
      if (events.length === 0) return
      this.lastRead = Number(events[events.length - 1]?.id)
      for (const reader of this.readers) reader.receive(events)
      if (!slice.more) return
    }
  }
}

export class EventHub {
  private readonly feeds = new Map<string, StreamFeed>()
  /** Told of every wake-up, whatever the stream: the inbox feed picks up streams created after it connected. */
  private readonly watchers = new Set<(streamId: string) => void>()
  private stopLocal: (() => void) | undefined
  private stopLocalDeltas: (() => void) | undefined
  private listener: EventListener | undefined
  private closed = false

  private readonly db: Kysely<Database>
  private readonly log: FastifyBaseLogger

  constructor(
    db: Kysely<Database>,
    log: FastifyBaseLogger,
  ) {
    this.db = db
    this.log = log
  }

  /** Starts listening: LISTEN on PostgreSQL (`postgresUrl`), the in-process emitter otherwise. */
  async start(postgresUrl: string | undefined): Promise<void> {
    if (postgresUrl) {
      this.listener = await listenForEvents(postgresUrl, {
        wake: (streamId) => this.wake(streamId),
        delta: (delta) => this.delta(delta),
        // Notifications sent while the connection was down are lost: every feed reads from the table.
        reconnected: () => {
          for (const feed of this.feeds.values()) feed.wake()
        },
        log: this.log,
      })
    } else {
      this.stopLocal = onLocalWake((streamId) => this.wake(streamId))
      this.stopLocalDeltas = onLocalDelta((delta) => this.delta(delta))
    }
  }

  private wake(streamId: string): void {
    this.feeds.get(streamId)?.wake()
    for (const watcher of this.watchers) watcher(streamId)
  }

  /** Calls `watcher` with the stream of every wake-up (new events somewhere); the returned function stops it. */
  watchWakes(watcher: (streamId: string) => void): () => void {
    this.watchers.add(watcher)
    return () => this.watchers.delete(watcher)
  }

  /** A live delta: to the readers of its stream on this instance (none: dropped). */
  private delta(delta: LiveDelta): void {
    this.feeds.get(delta.streamId)?.deltas.push(delta)
  }

  /** Adds a reader to its stream's feed; the returned function removes it. */
  subscribe(streamId: string, reader: FeedReader): () => void {
    if (this.closed) throw new Error('the event hub is closed')
    let feed = this.feeds.get(streamId)
    if (!feed) {
      feed = new StreamFeed(this.db, streamId, this.log)
      this.feeds.set(streamId, feed)
      feed.wake()
    }
    feed.readers.add(reader)
    return () => {
      feed.readers.delete(reader)
      if (feed.readers.size === 0 && this.feeds.get(streamId) === feed) {
        feed.stop()
        this.feeds.delete(streamId)
      }
    }
  }

  /** PostgreSQL: the backend pid of the LISTEN connection (tests terminate it to check reconnection). */
  get listenerPid(): number | undefined {
    return this.listener?.pid
  }

  /** How many readers are connected (all streams). */
  get readerCount(): number {
    let count = 0
    for (const feed of this.feeds.values()) count += feed.readers.size
    return count
  }

  /** Ends every open reader and stops listening, so that shutdown is not held up by open streams. */
  async close(): Promise<void> {
    this.closed = true
    for (const feed of this.feeds.values()) {
      feed.stop()
      for (const reader of [...feed.readers]) reader.close()
    }
    this.feeds.clear()
    this.watchers.clear()
    this.stopLocal?.()
    this.stopLocalDeltas?.()
    await this.listener?.close()
  }
}
