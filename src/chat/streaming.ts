// Streaming messages (docs/streaming-and-usage.md): an agent's answer written into the chat as it arrives. A
// task has at most one message (messages.task_id is unique): the first delta creates it with status
// `streaming` (message.created), a retried delivery resets it, later deltas append to its text in SQL (no
// event: the deltas themselves go live, src/events/deltas.ts), and the end is one stored event,
// message.completed, with status `complete` — or `failed` when the attempt failed for good.
//
// While a message streams only its `text` (and `stream_length`) follow the deltas: its stored `content` is
// the first delta's, and readers derive the content from the text (toMessage). The content is written whole
// when the stream ends, complete or failed.
import { PostgresAdapter, sql, type Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { newId, now } from '../ids.js'
import { appendEvent } from '../events/store.js'
import type { MessageOrigin } from '../triggers/message-triggers.js'
import { messageWritten } from './written.js'
import { contentOfText, renderText } from './richtext.js'
import { MAX_TEXT_LENGTH, type Content, type Message } from './schemas.js'
import { toMessage, type MessageRow } from './store.js'

export { contentOfText }

export async function findTaskMessage(db: Kysely<Database>, taskId: string): Promise<Message | undefined> {
  const row = await db.selectFrom('messages').selectAll().where('task_id', '=', taskId).executeTakeFirst()
  return row && toMessage(row)
}

/**
 * The first delta of a delivery: creates the task's message (status streaming, message.created) or, when the
 * task has one already (a retried delivery, another claim), starts it again from `text` (`reset: true`). Call
 * in a transaction.
 */
export async function openStreamingMessage(
  db: Kysely<Database>,
  input: { workspaceId: string; streamId: string; authorId: string; taskId: string; text: string; streamKey: string | null; traceparent: string | null },
): Promise<{ message: Message; reset: boolean }> {
  const content = JSON.stringify(contentOfText(input.text))
  const existing = await db.selectFrom('messages').select(['id']).where('task_id', '=', input.taskId).executeTakeFirst()
  if (existing) {
    const row = await db
      .updateTable('messages')
      .set({ status: 'streaming', content, text: input.text, stream_key: input.streamKey, stream_length: input.text.length })
      .where('id', '=', existing.id)
      .returningAll()
      .executeTakeFirstOrThrow()
    return { message: toMessage(row), reset: true }
  }
  const row: MessageRow = {
    id: newId(),
    workspace_id: input.workspaceId,
    stream_id: input.streamId,
    author_id: input.authorId,
    author_type: 'agent',
    content,
    text: input.text,
    revision: 1,
    created_at: now(),
    edited_at: null,
    status: 'streaming',
    task_id: input.taskId,
    stream_key: input.streamKey,
    stream_length: input.text.length,
  }
  await db.insertInto('messages').values(row).execute()
  const message = toMessage(row)
  // Message triggers look at the whole answer: they are matched at completion, not here.
  await appendEvent(db, { workspaceId: input.workspaceId, streamId: input.streamId, type: 'message.created', data: message, traceparent: input.traceparent })
  return { message, reset: false }
}

/** The text so far of a streaming message (no event; a no-op once the message is no longer streaming). */
export async function writeStreamingText(db: Kysely<Database>, messageId: string, text: string): Promise<void> {
  await db.updateTable('messages').set({ text, stream_length: text.length }).where('id', '=', messageId).where('status', '=', 'streaming').execute()
}

/** What appendDelta did: appended (or opened), or refused because the message would pass MAX_TEXT_LENGTH. */
export type DeltaResult = { messageId: string; offset: number; reset: boolean; tooLong?: undefined } | { tooLong: true; messageId: string; length: number }

/**
 * A delta posted to /api/tasks/{id}/deltas, appended to the task's message in the caller's transaction, which
 * holds the task's row (read for update on PostgreSQL; SQLite runs one transaction at a time), so the deltas of
 * one task queue. Opens the message at the first delta of a claim. Returns the message and where the delta
 * starts in its text.
 *
 * The common case is one UPDATE that appends in SQL (`text || delta`) under the bound, and returns the new
 * length: neither the text so far nor its content travels between Tandem and the database, so a delta costs its
 * own size, not the message's. Only when that UPDATE matches nothing is the row read, to say why.
 *
 * A message holds at most MAX_TEXT_LENGTH characters (UTF-16 code units, as the offsets count): the delta that
 * would pass it fails the stream — the message keeps the text it has with status `failed` (message.completed) —
 * and every later delta of the same claim is refused too. The answer itself still goes to /result.
 */
export async function appendDelta(
  db: Kysely<Database>,
  input: { workspaceId: string; streamId: string; authorId: string; taskId: string; delta: string; streamKey: string | null; traceparent: string | null },
): Promise<DeltaResult> {
  const units = input.delta.length
  const appended = await db
    .updateTable('messages')
    .set((eb) => ({ text: sql<string>`${sql.ref('text')} || ${input.delta}`, stream_length: eb('stream_length', '+', units) }))
    .where('task_id', '=', input.taskId)
    .where('status', '=', 'streaming')
    .where((eb) => (input.streamKey === null ? eb('stream_key', 'is', null) : eb('stream_key', '=', input.streamKey)))
    .where('stream_length', '<=', MAX_TEXT_LENGTH - units)
    .returning(['id', 'stream_length'])
    .executeTakeFirst()
  if (appended) return { messageId: appended.id, offset: Number(appended.stream_length) - units, reset: false }
  const current = await db.selectFrom('messages').select(['id', 'status', 'stream_key', 'stream_length']).where('task_id', '=', input.taskId).executeTakeFirst()
  const sameClaim = current !== undefined && current.stream_key === input.streamKey
  if (sameClaim && current.status === 'failed') return { tooLong: true, messageId: current.id, length: Number(current.stream_length) }
  if (!sameClaim || current.status !== 'streaming') {
    const { message, reset } = await openStreamingMessage(db, { ...input, text: input.delta })
    return { messageId: message.id, offset: 0, reset }
  }
  // Streaming under this claim and not appended: the delta would pass the bound.
  await failStreamingMessage(db, input.taskId, input.traceparent)
  return { tooLong: true, messageId: current.id, length: Number(current.stream_length) }
}

/**
 * POST /api/tasks/{id}/deltas: in one transaction of its own, the task still open (else null) and the delta
 * appended under the task's current claim (a new claim's first delta resets the text).
 */
export async function appendTaskDelta(
  db: Kysely<Database>,
  input: { workspaceId: string; streamId: string; authorId: string; taskId: string; delta: string; traceparent: string | null; postgres: boolean },
): Promise<DeltaResult | null> {
  const { postgres, ...delta } = input
  return db.transaction().execute(async (trx) => {
    let query = trx.selectFrom('run_tasks').select(['state', 'token_hash']).where('id', '=', input.taskId)
    if (postgres) query = query.forUpdate()
    const task = await query.executeTakeFirst()
    if (task?.state !== 'open') return null
    return appendDelta(trx, { ...delta, streamKey: task.token_hash })
  })
}

/**
 * The end of a streamed answer: the message gets its whole content and status complete (one stored event,
 * message.completed), then its message triggers are matched. In the transaction that settles the task.
 */
export async function completeStreamingMessage(
  db: Kysely<Database>,
  input: { messageId: string; workspaceId: string; content: Content; traceparent: string | null; origin: MessageOrigin | null },
): Promise<Message> {
  const row = await db
    .updateTable('messages')
    .set({ content: JSON.stringify(input.content), text: renderText(input.content), status: 'complete' })
    .where('id', '=', input.messageId)
    .where('workspace_id', '=', input.workspaceId)
    .returningAll()
    .executeTakeFirstOrThrow()
  const message = toMessage(row)
  await appendEvent(db, { workspaceId: input.workspaceId, streamId: message.streamId, type: 'message.completed', data: message, traceparent: input.traceparent })
  await messageWritten(db, input.workspaceId, message, input.origin)
  return message
}

/**
 * The attempt writing the task's message failed for good (or its run was canceled): the message keeps the text
 * it has, with status failed and the content of that text, in one stored message.completed event. Nothing when
 * the task has no streaming message. The row is read for update on PostgreSQL (no delta lands between the read
 * and the write) and written once: the revision trigger skips it, as the row was still streaming.
 */
export async function failStreamingMessage(db: Kysely<Database>, taskId: string, traceparent: string | null): Promise<Message | undefined> {
  let query = db.selectFrom('messages').select(['id', 'text']).where('task_id', '=', taskId).where('status', '=', 'streaming')
  if (db.getExecutor().adapter instanceof PostgresAdapter) query = query.forUpdate()
  const current = await query.executeTakeFirst()
  if (!current) return undefined
  const row = await db
    .updateTable('messages')
    .set({ status: 'failed', content: JSON.stringify(contentOfText(current.text)) })
    .where('id', '=', current.id)
    .where('status', '=', 'streaming')
    .returningAll()
    .executeTakeFirst()
  if (!row) return undefined
  const message = toMessage(row)
  await appendEvent(db, { workspaceId: row.workspace_id, streamId: row.stream_id, type: 'message.completed', data: message, traceparent })
  return message
}
