// GET /mcp: a session's stream of notifications, on any instance. It follows the workspace's streams through the
// instance's event hub (as the inbox feed does) and reads the session's subscriptions from the database as events
// arrive, so a subscription made through another instance counts at once. A stream created after the GET opened
// is followed from its first event (the hub tells every stream of each wake-up; a stream not yet followed is looked
// up once), and every keep-alive looks for new streams besides. `notifications/resources/updated`
// goes out when a subscribed run changes, when a subscribed stream gets, edits or completes a message, and when
// the inbox gains or loses an item; at most one per resource per second (a later change within the second is sent
// at its end). Held like the other event streams: a connection share, `: keep-alive`, a lifetime, a buffer bound.
import type { ServerResponse } from 'node:http'
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import type { EventHub, FeedReader } from '../events/hub.js'
import type { StreamEvent } from '../events/store.js'
import { WorkspaceStreams } from '../events/workspace-streams.js'
import { inboxOf, itemKey, type Caller } from '../inbox/items.js'
import { INBOX_URI, messagesUri, runUri } from './resources.js'
import { subscriptionsOf } from './sessions.js'

const NOTIFY_EVERY_MS = 1000
const INBOX_EVENTS = new Set(['run.created', 'run.updated', 'tool_call.created', 'tool_call.updated', 'decision.escalated'])

/** The resources an event changes (the inbox is checked apart: only a change of its items counts). */
function urisOf(event: StreamEvent): string[] {
  const data = event.data as { id?: string; runId?: string }
  if (event.type.startsWith('message.')) return [messagesUri(event.streamId)]
  if (event.type === 'run.created' || event.type === 'run.updated') return data.id ? [runUri(data.id)] : []
  if (event.type.startsWith('tool_call.') || event.type.startsWith('decision.')) return data.runId ? [runUri(data.runId)] : []
  return []
}

export class NotificationStream implements FeedReader {
  private readonly followed = new Map<string, () => void>()
  private readonly lastSent = new Map<string, number>()
  private readonly pending = new Map<string, NodeJS.Timeout>()
  private readonly keepAlive: NodeJS.Timeout
  private readonly lifetime: NodeJS.Timeout
  private readonly stopWatching: () => void
  private readonly streams: WorkspaceStreams
  private inboxKeys: Set<string> | null = null
  private queue: Promise<void> = Promise.resolve()
  private inboxCheckQueued = false
  private ended = false

  private readonly raw: ServerResponse
  private readonly db: Kysely<Database>
  private readonly hub: EventHub
  private readonly sessionId: string
  private readonly caller: Caller
  private readonly options: { keepAliveMs: number; maxBufferBytes: number; maxLifetimeMs: number }
  private readonly log: FastifyBaseLogger

  constructor(
    raw: ServerResponse,
    db: Kysely<Database>,
    hub: EventHub,
    sessionId: string,
    caller: Caller,
    options: { keepAliveMs: number; maxBufferBytes: number; maxLifetimeMs: number },
    log: FastifyBaseLogger,
  ) {
    this.raw = raw
    this.db = db
    this.hub = hub
    this.sessionId = sessionId
    this.caller = caller
    this.options = options
    this.log = log
    raw.once('close', () => this.close())
    this.streams = new WorkspaceStreams(db, caller.workspaceId)
    this.stopWatching = hub.watchWakes((streamId) => this.woken(streamId))
    this.keepAlive = setInterval(() => {
      this.write(': keep-alive\n\n')
      this.enqueue(() => this.follow())
    }, options.keepAliveMs)
    this.lifetime = setTimeout(() => this.close(), options.maxLifetimeMs)
    this.lifetime.unref()
    this.enqueue(async () => {
      this.inboxKeys = await this.readInboxKeys()
      await this.follow()
    })
  }

  receive(events: StreamEvent[]): void {
    const uris = new Set(events.flatMap(urisOf))
    const inbox = events.some((event) => INBOX_EVENTS.has(event.type))
    if (uris.size > 0 || inbox) this.enqueue(() => this.dispatch(uris, inbox))
  }

  /**
   * A stream's new feed starts where it found the log: an inbox change before that may have come after the
   * inbox was read, so it is read again (once for however many feeds start together). A message or run change
   * in that moment, as the stream was first followed, is not announced.
   */
  started(): void {
    if (this.inboxCheckQueued) return
    this.inboxCheckQueued = true
    this.enqueue(() => {
      this.inboxCheckQueued = false
      return this.dispatch(new Set(), true)
    })
  }

  close(): void {
    if (this.ended) return
    this.ended = true
    clearInterval(this.keepAlive)
    clearTimeout(this.lifetime)
    this.stopWatching()
    for (const timer of this.pending.values()) clearTimeout(timer)
    for (const unsubscribe of this.followed.values()) unsubscribe()
    this.followed.clear()
    if (!this.raw.writableEnded) this.raw.end()
  }

  /** A stream had new events: one not followed yet may be a new stream of the workspace (its first events count). */
  private woken(streamId: string): void {
    if (this.ended || this.followed.has(streamId) || this.streams.isOther(streamId)) return
    this.enqueue(async () => {
      if (this.followed.has(streamId)) return
      const ours = await this.streams.belongs(streamId)
      if (!ours || this.ended || this.followed.has(streamId)) return
      this.followed.set(streamId, this.hub.subscribe(streamId, this))
      // The events that woke it came before the subscription: what they changed is told now.
      await this.dispatch(new Set([messagesUri(streamId)]), true)
    })
  }

  /** One piece of work at a time, in order; a failure is logged and the stream goes on. */
  private enqueue(work: () => Promise<void>): void {
    this.queue = this.queue.then(() => (this.ended ? undefined : work())).catch((error: unknown) => this.log.warn({ err: error }, 'the MCP notification stream could not read'))
  }

  private async readInboxKeys(): Promise<Set<string>> {
    return new Set((await inboxOf(this.db, this.caller)).map(itemKey))
  }

  /** Follows every stream of the workspace not yet followed; ends when the session has ended. */
  private async follow(): Promise<void> {
    if ((await subscriptionsOf(this.db, this.sessionId)) === null) return this.close()
    const streams = await this.db.selectFrom('streams').select('id').where('workspace_id', '=', this.caller.workspaceId).execute()
    if (this.ended) return
    for (const { id } of streams) if (!this.followed.has(id)) this.followed.set(id, this.hub.subscribe(id, this))
  }

  private async dispatch(uris: Set<string>, inbox: boolean): Promise<void> {
    const subscribed = await subscriptionsOf(this.db, this.sessionId)
    if (subscribed === null) return this.close()
    for (const uri of uris) if (subscribed.has(uri)) this.notify(uri)
    if (inbox && subscribed.has(INBOX_URI)) {
      const keys = await this.readInboxKeys()
      const before = this.inboxKeys
      this.inboxKeys = keys
      if (!before || keys.size !== before.size || [...keys].some((key) => !before.has(key))) this.notify(INBOX_URI)
    }
  }

  private notify(uri: string): void {
    if (this.pending.has(uri)) return
    const wait = (this.lastSent.get(uri) ?? 0) + NOTIFY_EVERY_MS - Date.now()
    const send = () => {
      this.pending.delete(uri)
      this.lastSent.set(uri, Date.now())
      this.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri } })}\n\n`)
    }
    if (wait <= 0) send()
    else this.pending.set(uri, setTimeout(send, wait))
  }

  private write(text: string): void {
    if (this.ended) return
    // A client that does not read is dropped rather than buffered without end.
    if (this.raw.writableLength > this.options.maxBufferBytes) return this.close()
    this.raw.write(text)
  }
}
