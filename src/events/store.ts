// The event log: every change a client can see appends an event to its stream, inside the transaction of
// the change. Ids are per stream, from 1, in commit order with no gaps: the stream's head row is bumped with
// an upsert … RETURNING, whose row lock holds the next writer of that stream until this one commits (or
// rolls back, undoing its bump). Listeners are woken at commit: pg_notify on PostgreSQL (delivered when
// the transaction commits), the in-process wake-up on SQLite (its reader queues behind the transaction).
// Matching webhook deliveries, and their jobs, are created in the same transaction.
import { PostgresAdapter, sql, type Kysely, type Selectable, type Expression } from 'kysely'
import type { Database } from '../db/database.js'
import { prepared, rawStatement } from '../db/prepared.js'
import { deferToCommit, defersToCommit } from '../db/before-commit.js'
import { now } from '../ids.js'
import { EVENTS_CHANNEL, wakeLocally } from './wakeups.js'
import type { EventType, StreamEvent } from './schemas.js'
import { scheduleDeliveries, type Subscription } from './webhooks/store.js'
import type { StreamEventHeadTable, StreamEventTable } from './events.table.js'

export type { StreamEventHeadTable, StreamEventTable }

export type { EventType, StreamEvent } from './schemas.js'



type EventRow = Selectable<StreamEventTable>

export function toEvent(row: Pick<EventRow, 'id' | 'type' | 'stream_id' | 'created_at' | 'data'>): StreamEvent {
  return { id: String(row.id), type: row.type as EventType, streamId: row.stream_id, createdAt: row.created_at, data: JSON.parse(row.data) }
}

// SQLite: the head is bumped by an UPDATE, and inserted by the stream's first event only (an upsert tries the
// insert first every time: 13 µs against 6). Transactions there run one at a time, so the two cannot race.
const bumpHead = prepared(1, (db, streamId: Expression<string>) =>
  db
    .updateTable('stream_event_heads')
    .set((eb) => ({ last_id: eb('last_id', '+', 1) }))
    .where('stream_id', '=', streamId)
    .returning('last_id'),
)
const insertHead = prepared(2, (db, streamId: Expression<string>, workspaceId: Expression<string>) =>
  db.insertInto('stream_event_heads').values({ stream_id: streamId, workspace_id: workspaceId, last_id: 1, purged_through: 0 }).returning('last_id'),
)

const insertRow = prepared(6, (db, streamId: Expression<string>, id: Expression<number>, workspaceId: Expression<string>, type: Expression<string>, data: Expression<string>, createdAt: Expression<string>) =>
  db.insertInto('stream_events').values({ stream_id: streamId, id, workspace_id: workspaceId, type, data, created_at: createdAt }),
)

/** No event is larger than this (its data as JSON, in bytes; docs/runs-and-events.md "Events"). */
export const MAX_EVENT_BYTES = 64 * 1024
// What an event too large for the bound leaves out: the bulky fields of a message (its content and text), a
// cycle (its phases) or a run (its input and phases). Clients read the whole resource with GET.
const BULKY_FIELDS = ['content', 'text', 'input', 'phases', 'phasesTemplate', 'description']

/**
 * The event's data within MAX_EVENT_BYTES: as given, or without its bulky fields and with `truncated: true`.
 * `json`: JSON.stringify(data), when the caller has it already.
 */
export function boundEventData(data: unknown, json = JSON.stringify(data)): { data: unknown; json: string } {
  if (json.length <= MAX_EVENT_BYTES / 3 || Buffer.byteLength(json) <= MAX_EVENT_BYTES) return { data, json }
  const slim: Record<string, unknown> = { ...(data as Record<string, unknown>), truncated: true }
  for (const field of BULKY_FIELDS) delete slim[field]
  let slimJson = JSON.stringify(slim)
  if (Buffer.byteLength(slimJson) <= MAX_EVENT_BYTES) return { data: slim, json: slimJson }
  const bare = { id: (data as { id?: unknown }).id, truncated: true }
  slimJson = JSON.stringify(bare)
  return { data: bare, json: slimJson }
}

/**
 * Appends an event to a stream. Call it with the transaction of the change it reports; `traceparent` is the
 * trace of that change (its request's span, or its run's; absent: none known), which the event's webhook
 * deliveries continue. `json`: the data's JSON text (JSON.stringify(data) exactly), when the caller has it.
 *
 * On PostgreSQL, in a transaction, the event is written just before the commit (db/before-commit.ts), with the
 * transaction's other events of its stream: the stream's head row, which every writer of the stream waits on,
 * is then locked from the transaction's last statement to its commit only, a transaction's events of a stream
 * take one round trip and one notification, and every transaction takes its heads after its other rows (one
 * lock order: no deadlock between a head and, say, a scorecard's rollup row). Ids are still given in commit
 * order with no gaps, in the order of the calls.
 */
export async function appendEvent(
  db: Kysely<Database>,
  input: { workspaceId: string; streamId: string; type: EventType; data: unknown; json?: string; traceparent?: string | null },
): Promise<void> {
  const createdAt = now()
  const bounded = boundEventData(input.data, input.json)
  const pending: PendingEvent = { workspaceId: input.workspaceId, type: input.type, data: bounded.data, json: bounded.json, createdAt, traceparent: input.traceparent ?? null }
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    if (!defersToCommit(db)) return writeOnPostgres(db, new Map([[input.streamId, [pending]]]))
    const open = pendingOf.get(db)
    if (open) {
      const ofStream = open.get(input.streamId)
      if (ofStream) ofStream.push(pending)
      else open.set(input.streamId, [pending])
      return
    }
    const streams = new Map([[input.streamId, [pending]]])
    pendingOf.set(db, streams)
    await deferToCommit(db, () => {
      pendingOf.delete(db)
      return writeOnPostgres(db, streams)
    })
    return
  }
  const bumped = await bumpHead(db, input.streamId)
  const [head] = bumped.length > 0 ? bumped : await insertHead(db, input.streamId, input.workspaceId)
  const id = Number(head?.last_id)
  await insertRow(db, input.streamId, id, input.workspaceId, input.type, bounded.json, createdAt)
  wakeLocally(input.streamId)
  // The caller's data as stored (its JSON text): no parse back, the stores hand over plain objects they no longer change.
  const event: StreamEvent = { id: String(id), type: input.type, streamId: input.streamId, createdAt, data: bounded.data }
  await scheduleDeliveries(db, input.workspaceId, event, pending.traceparent)
}

interface PendingEvent {
  workspaceId: string
  type: EventType
  data: unknown
  json: string
  createdAt: string
  traceparent: string | null
}

/** The events an open PostgreSQL transaction (the Kysely handle it was given) will write at its commit, by stream. */
const pendingOf = new WeakMap<Kysely<Database>, Map<string, PendingEvent[]>>()

/**
 * Writes events, a statement per stream (in the order of the streams' ids: transactions lock heads in one order),
 * and creates their webhook deliveries.
 */
async function writeOnPostgres(db: Kysely<Database>, streams: Map<string, PendingEvent[]>): Promise<void> {
  for (const streamId of [...streams.keys()].sort()) {
    const events = streams.get(streamId)!
    const { workspaceId } = events[0]!
    const [row] = await appendOnPostgres(db, streamId, workspaceId, events.length, events.map((e) => e.type), events.map((e) => e.json), events.map((e) => e.createdAt))
    if (!row || row.id === null) throw new Error(`no event appended to stream ${streamId}`)
    const first = Number(row.id) - events.length + 1
    for (const [i, pending] of events.entries()) {
      const event: StreamEvent = { id: String(first + i), type: pending.type, streamId, createdAt: pending.createdAt, data: pending.data }
      await scheduleDeliveries(db, pending.workspaceId, event, pending.traceparent, row.hooks ?? [])
    }
  }
}

/**
 * One round trip for a stream's events on PostgreSQL: the head bumped by their number, the rows written with the
 * ids it frees, listeners notified once (at commit) and the workspace's webhook subscriptions read
 * (scheduleDeliveries' candidates). The same text whatever the number of events (they go as arrays), so it is
 * compiled once (db/prepared.ts) and the server plans it once per connection. Answers the last id written.
 */
const appendOnPostgres = prepared(
  6,
  (db, streamId: Expression<string>, workspaceId: Expression<string>, count: Expression<number>, types: Expression<string[]>, data: Expression<string[]>, createdAts: Expression<string[]>) =>
    rawStatement(
      db,
      sql<{ id: number | string | null; hooks: Subscription[] | null }>`with head as (
    insert into stream_event_heads (stream_id, workspace_id, last_id, purged_through) values (${streamId}, ${workspaceId}, ${count}::int, 0)
    on conflict (stream_id) do update set last_id = stream_event_heads.last_id + excluded.last_id
    returning last_id
  ), appended as (
    insert into stream_events (stream_id, id, workspace_id, type, data, created_at)
    select ${streamId}, head.last_id - ${count}::int + e.n, ${workspaceId}, e.type, e.data, e.created_at
    from head, unnest(${types}::text[], ${data}::text[], ${createdAts}::text[])
      with ordinality as e(type, data, created_at, n)
    returning id
  )
  select max(appended.id) as id, pg_notify(${EVENTS_CHANNEL}, ${streamId} || ':' || max(appended.id)) as notified,
    (select json_agg(json_build_object('id', w.id, 'events', w.events, 'stream_id', w.stream_id)) from webhooks w
      where w.workspace_id = ${workspaceId} and w.enabled = 1) as hooks
  from appended`,
    ),
)

const selectAfter = prepared(3, (db, streamId: Expression<string>, after: Expression<number>, limit: Expression<number>) =>
  db
    .selectFrom('stream_events')
    .select(['id', 'type', 'stream_id', 'created_at', 'data'])
    .where('stream_id', '=', streamId)
    .where('id', '>', after)
    .orderBy('id')
    .limit(limit),
)

/** The events of a stream after `after`, oldest first. */
export async function listEvents(db: Kysely<Database>, streamId: string, after: number, limit: number): Promise<StreamEvent[]> {
  return (await selectAfter(db, streamId, after, limit)).map(toEvent)
}

export interface StreamHead {
  /** The id of the stream's latest event (0: none yet). */
  lastId: number
  /** Every event up to this id has been removed by retention (0: none). */
  purgedThrough: number
}

const selectHead = prepared(1, (db, streamId: Expression<string>) =>
  db.selectFrom('stream_event_heads').select(['last_id', 'purged_through']).where('stream_id', '=', streamId),
)

export async function streamHead(db: Kysely<Database>, streamId: string): Promise<StreamHead> {
  const [row] = await selectHead(db, streamId)
  return { lastId: Number(row?.last_id ?? 0), purgedThrough: Number(row?.purged_through ?? 0) }
}

/**
 * Retention: removes up to `batch` events created before `cutoff`, stream by stream, and records on each
 * stream's head what was removed (so an `after` older than that is known to be expired). Returns how many.
 */
export async function purgeEvents(db: Kysely<Database>, cutoff: string, batch: number): Promise<number> {
  const expired = await db
    .selectFrom('stream_events')
    .select(['stream_id', 'id'])
    .where('created_at', '<', cutoff)
    .orderBy('created_at')
    .limit(batch)
    .execute()
  const through = new Map<string, number>()
  for (const row of expired) through.set(row.stream_id, Math.max(through.get(row.stream_id) ?? 0, Number(row.id)))
  let purged = 0
  for (const [streamId, lastId] of through) {
    await db.transaction().execute(async (trx) => {
      const result = await trx.deleteFrom('stream_events').where('stream_id', '=', streamId).where('id', '<=', lastId).executeTakeFirst()
      purged += Number(result.numDeletedRows)
      await trx
        .updateTable('stream_event_heads')
        .set((eb) => ({ purged_through: sql<number>`case when ${eb.ref('purged_through')} > ${lastId} then ${eb.ref('purged_through')} else ${lastId} end` }))
        .where('stream_id', '=', streamId)
        .execute()
    })
  }
  return purged
}
