// Reads of the event log bounded by bytes as well as by count (docs/runs-and-events.md, Events): a JSON page or an SSE replay batch
// carries at most EVENT_READ_BUDGET_BYTES (fewer events, and the reader goes on from the last one). Sizes come
// first, from a query that reads no event's data (octet_length: SQLite and PostgreSQL both take it from the row's
// header or TOAST pointer); then the events that fit, as their stored JSON text, which is written out as it is:
// a replay never parses or re-serialises an event, so a batch costs the event loop a copy, not a parse.
import { sql, type Kysely } from 'kysely'
import type { Database } from '../db/database.js'

export const EVENT_READ_BUDGET_BYTES = 1024 * 1024

// What an event adds around its data: {"id":"…","type":"…","streamId":"<uuid>","createdAt":"<timestamp>","data":} and a comma.
const ENVELOPE_BYTES = 128

/** An event as the log, the JSON page and SSE carry it, already serialised (`json`). */
export interface RawEvent {
  id: number
  type: string
  json: string
}

export interface EventSlice {
  events: RawEvent[]
  /** More events follow the last one (the count or the byte budget ended the slice). */
  more: boolean
}

function toRawEvent(row: { id: number | string; type: string; stream_id: string; created_at: string; data: string }): RawEvent {
  const id = Number(row.id)
  // The same fields, in the same order, as JSON.stringify of a StreamEvent (src/events/sse.ts, sseFrame).
  const json = `{"id":"${id}","type":${JSON.stringify(row.type)},"streamId":${JSON.stringify(row.stream_id)},"createdAt":${JSON.stringify(row.created_at)},"data":${row.data}}`
  return { id, type: row.type, json }
}

/**
 * Up to `limit` events of the stream after `after`, oldest first, whose JSON together stays within `budget`
 * bytes. The first event always comes, even alone past the budget (an event stored before events were capped at
 * 64 KiB), so a reader always moves on.
 */
export async function readEventSlice(db: Kysely<Database>, streamId: string, after: number, limit: number, budget = EVENT_READ_BUDGET_BYTES): Promise<EventSlice> {
  const sizes = await db
    .selectFrom('stream_events')
    .select(['id', sql<number | string>`octet_length(data)`.as('bytes')])
    .where('stream_id', '=', streamId)
    .where('id', '>', after)
    .orderBy('id')
    .limit(limit + 1)
    .execute()
  let count = 0
  let total = 0
  for (const row of sizes) {
    if (count === limit) break
    total += Number(row.bytes) + ENVELOPE_BYTES
    if (count > 0 && total > budget) break
    count += 1
  }
  if (count === 0) return { events: [], more: false }
  const through = Number(sizes[count - 1]?.id)
  const rows = await db
    .selectFrom('stream_events')
    .select(['id', 'type', 'stream_id', 'created_at', 'data'])
    .where('stream_id', '=', streamId)
    .where('id', '>', after)
    .where('id', '<=', through)
    .orderBy('id')
    .execute()
  return { events: rows.map(toRawEvent), more: sizes.length > count }
}

/** A JSON page of events, `{ data, nextCursor }`, written from the events' stored text. */
export function eventPageJson(slice: EventSlice): string {
  const last = slice.events[slice.events.length - 1]
  const nextCursor = slice.more && last ? JSON.stringify(Buffer.from(String(last.id)).toString('base64url')) : 'null'
  return `{"data":[${slice.events.map((event) => event.json).join(',')}],"nextCursor":${nextCursor}}`
}
