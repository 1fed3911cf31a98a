// GET /api/me/inbox/events: one connection's view of the caller's inbox. It reads the inbox once, sends it
// (each item as `inbox.added`), then follows the workspace's streams through the instance's event hub: any run
// event makes it read the inbox again and send the difference (`inbox.added` for a new or changed item,
// `inbox.removed`). A stream created later is picked up at its first event (the hub tells every feed of each
// wake-up: a stream not yet followed is looked up once, and followed if it is the workspace's), and at each
// keep-alive besides. A client that does not read is dropped past the buffer limit, and the feed
// ends after TANDEM_SSE_MAX_LIFETIME_S as a stream's events do (it holds a connection slot); a client that connects
// again is sent the current items again.
import type { ServerResponse } from 'node:http'
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import type { EventHub, FeedReader } from '../events/hub.js'
import type { StreamEvent } from '../events/store.js'
import { WorkspaceStreams } from '../events/workspace-streams.js'
import { inboxOf, itemKey, type Caller } from './items.js'
import type { InboxItem } from './schemas.js'

const RUN_EVENTS = new Set(['run.created', 'run.updated', 'tool_call.created', 'tool_call.updated'])

export class InboxConnection implements FeedReader {
  private readonly items = new Map<string, InboxItem>()
  private readonly subscriptions = new Map<string, () => void>()
  private readonly keepAlive: NodeJS.Timeout
  private readonly lifetime: NodeJS.Timeout
  private readonly stopWatching: () => void
  private readonly streams: WorkspaceStreams
  private reading = false
  private again = false
  private ended = false

  private readonly raw: ServerResponse
  private readonly db: Kysely<Database>
  private readonly hub: EventHub
  private readonly caller: Caller
  private readonly options: { keepAliveMs: number; maxBufferBytes: number; maxLifetimeMs: number }
  private readonly log: FastifyBaseLogger

  constructor(
    raw: ServerResponse,
    db: Kysely<Database>,
    hub: EventHub,
    caller: Caller,
    options: { keepAliveMs: number; maxBufferBytes: number; maxLifetimeMs: number },
    log: FastifyBaseLogger,
  ) {
    this.raw = raw
    this.db = db
    this.hub = hub
    this.caller = caller
    this.options = options
    this.log = log
    raw.once('close', () => this.close())
    this.streams = new WorkspaceStreams(db, caller.workspaceId)
    this.stopWatching = hub.watchWakes((streamId) => this.woken(streamId))
    this.keepAlive = setInterval(() => {
      this.write(': keep-alive\n\n')
      void this.follow()
    }, options.keepAliveMs)
    this.lifetime = setTimeout(() => this.close(), options.maxLifetimeMs)
    this.lifetime.unref()
    // The first follow reads the inbox (and so sends the current items).
    void this.follow()
  }

  receive(events: StreamEvent[]): void {
    if (events.some((event) => RUN_EVENTS.has(event.type))) this.refresh()
  }

  /** A stream's new feed starts where it found the log: a run event before that may have come after the inbox read. */
  started(): void {
    this.refresh()
  }

  close(): void {
    if (this.ended) return
    this.ended = true
    clearInterval(this.keepAlive)
    clearTimeout(this.lifetime)
    this.stopWatching()
    for (const unsubscribe of this.subscriptions.values()) unsubscribe()
    this.subscriptions.clear()
    if (!this.raw.writableEnded) this.raw.end()
  }

  /** A stream had new events: one this feed does not follow yet may be a new stream of the workspace. */
  private woken(streamId: string): void {
    if (this.ended || this.subscriptions.has(streamId) || this.streams.isOther(streamId)) return
    this.streams.belongs(streamId)
      .then((ours) => {
        if (!ours || this.ended || this.subscriptions.has(streamId)) return
        this.subscriptions.set(streamId, this.hub.subscribe(streamId, this))
        this.refresh()
      })
      .catch((error: unknown) => this.log.warn({ err: error }, 'the inbox feed could not look a stream up'))
  }

  /** Subscribes to every stream of the workspace not yet followed. */
  private async follow(): Promise<void> {
    try {
      const streams = await this.db.selectFrom('streams').select('id').where('workspace_id', '=', this.caller.workspaceId).execute()
      if (this.ended) return
      const added = streams.filter(({ id }) => !this.subscriptions.has(id))
      for (const { id } of added) this.subscriptions.set(id, this.hub.subscribe(id, this))
      // A new stream's runs may have changed the inbox before it was followed.
      if (added.length > 0) this.refresh()
    } catch (error) {
      this.log.warn({ err: error }, 'the inbox feed could not list the workspace\'s streams')
    }
  }

  /** Reads the inbox again and sends what changed (one read at a time; a request meanwhile reads once more). */
  private refresh(): void {
    if (this.ended) return
    if (this.reading) {
      this.again = true
      return
    }
    this.reading = true
    inboxOf(this.db, this.caller)
      .then((items) => this.send(items))
      .catch((error: unknown) => this.log.warn({ err: error }, 'the inbox feed could not read the inbox'))
      .finally(() => {
        this.reading = false
        if (this.again) {
          this.again = false
          this.refresh()
        }
      })
  }

  private send(current: InboxItem[]): void {
    const seen = new Set<string>()
    for (const item of current) {
      const key = itemKey(item)
      seen.add(key)
      // A new item, or one that changed (a claim taken or gone): the client replaces it by its key.
      const data = JSON.stringify(item)
      const previous = this.items.get(key)
      if (previous === undefined || JSON.stringify(previous) !== data) {
        this.items.set(key, item)
        this.write(`event: inbox.added\ndata: ${data}\n\n`)
      }
    }
    for (const [key, item] of this.items) {
      if (seen.has(key)) continue
      this.items.delete(key)
      this.write(`event: inbox.removed\ndata: ${JSON.stringify(item)}\n\n`)
    }
  }

  private write(frame: string): void {
    if (this.ended) return
    if (this.raw.writableLength > this.options.maxBufferBytes) {
      this.raw.destroy()
      return this.close()
    }
    this.raw.write(frame)
  }
}
