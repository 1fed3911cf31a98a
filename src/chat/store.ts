// Message storage: messages and their earlier revisions. An edit is one conditional UPDATE (a
// compare-and-set on `revision` when asked); a trigger keeps the previous content, so no edit loses one.
// Posting and editing append their event (message.created, message.edited): call them with a transaction.
import { sql, type Expression, type Kysely, type Selectable } from 'kysely'
import { prepared } from '../db/prepared.js'
import type { Database } from '../db/database.js'
import type { MessageTable } from './chat.table.js'
import { newId, now } from '../ids.js'
import type { Content, Message, Revision } from './schemas.js'
import { contentOfText, renderText } from './richtext.js'
import { appendEvent } from '../events/store.js'
import type { MessageOrigin } from '../triggers/message-triggers.js'
import { messageWritten } from './written.js'



export type MessageRow = Selectable<MessageTable>

const insertRow = prepared(
  8,
  (db, id: Expression<string>, workspaceId: Expression<string>, streamId: Expression<string>, authorId: Expression<string>, authorType: Expression<'principal' | 'agent'>, content: Expression<string>, text: Expression<string>, createdAt: Expression<string>) =>
  db.insertInto('messages').values({
    id,
    workspace_id: workspaceId,
    stream_id: streamId,
    author_id: authorId,
    author_type: authorType,
    content,
    text,
    revision: 1,
    created_at: createdAt,
    edited_at: null,
  }),
)
const selectOne = prepared(2, (db, id: Expression<string>, workspaceId: Expression<string>) =>
  db.selectFrom('messages').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId),
)
export function toMessage(row: MessageRow): Message {
  return {
    id: row.id,
    streamId: row.stream_id,
    authorId: row.author_id,
    authorType: row.author_type,
    // A streaming message's deltas append to its text only (src/chat/streaming.ts): its content is its text's.
    content: row.status === 'streaming' ? contentOfText(row.text) : JSON.parse(row.content),
    text: row.text,
    revision: Number(row.revision),
    createdAt: row.created_at,
    editedAt: row.edited_at,
    status: row.status ?? 'complete',
  }
}

// What an edit reads back: every field of the answer but the content and text it has just written.
const EDITED_COLUMNS = ['id', 'workspace_id', 'stream_id', 'author_id', 'author_type', 'revision', 'created_at', 'edited_at', 'status'] as const
type EditedRow = Pick<MessageRow, (typeof EDITED_COLUMNS)[number]>

// The edit without If-Match (the common one): one conditional UPDATE, compiled once. The migration's
// trigger stores the previous content as a revision.
const editAny = prepared(
  7,
  (db, content: Expression<string>, text: Expression<string>, editedAt: Expression<string>, id: Expression<string>, workspaceId: Expression<string>, principalId: Expression<string>, isAdmin: Expression<number>) =>
  db
    .updateTable('messages')
    .set((eb) => ({ content, text, edited_at: editedAt, revision: eb('revision', '+', 1) }))
    .where('id', '=', id)
    .where('workspace_id', '=', workspaceId)
    .where((eb) => eb.or([eb('author_id', '=', principalId), eb(isAdmin, '=', 1)]))
    .where('status', '<>', 'streaming')
    .returning(EDITED_COLUMNS),
)

/** The edited message: its row as read back, with the content (the very object the edit wrote) and its text. */
function editedMessage(row: EditedRow, content: Content, text: string): Message {
  return {
    id: row.id,
    streamId: row.stream_id,
    authorId: row.author_id,
    authorType: row.author_type,
    content,
    text,
    revision: Number(row.revision),
    createdAt: row.created_at,
    editedAt: row.edited_at,
    status: row.status ?? 'complete',
  }
}

/**
 * JSON.stringify(message), given its content's JSON text: the content, most of the message, is not written out a
 * second time. The fields come in toMessage's order, so the text is JSON.stringify's to the byte.
 */
export function messageJson(message: Message, contentJson: string): string {
  const head = JSON.stringify({ id: message.id, streamId: message.streamId, authorId: message.authorId, authorType: message.authorType })
  const tail = JSON.stringify({ text: message.text, revision: message.revision, createdAt: message.createdAt, editedAt: message.editedAt, status: message.status })
  return `${head.slice(0, -1)},"content":${contentJson},${tail.slice(1)}`
}

export async function insertMessage(
  db: Kysely<Database>,
  input: { workspaceId: string; streamId: string; authorId: string; authorType?: 'principal' | 'agent'; content: Content; traceparent: string | null; origin?: MessageOrigin; fireTriggers?: false },
): Promise<Message> {
  const row: MessageRow = {
    id: newId(),
    workspace_id: input.workspaceId,
    stream_id: input.streamId,
    author_id: input.authorId,
    author_type: input.authorType ?? 'principal',
    content: JSON.stringify(input.content),
    text: renderText(input.content),
    revision: 1,
    created_at: now(),
    edited_at: null,
    status: 'complete',
    task_id: null,
    stream_key: null,
    stream_length: null,
  }
  await insertRow(db, row.id, row.workspace_id, row.stream_id, row.author_id, row.author_type, row.content, row.text, row.created_at)
  const message = toMessage(row)
  await appendEvent(db, { workspaceId: input.workspaceId, streamId: input.streamId, type: 'message.created', data: message, traceparent: input.traceparent })
  // Message triggers (docs/operators.md): matched here, fired by a job that commits with the message. A message
  // that itself starts a run (an A2A caller's, docs/a2a.md) fires none.
  if (input.fireTriggers !== false) await messageWritten(db, input.workspaceId, message, input.origin ?? null)
  return message
}

export async function findMessage(db: Kysely<Database>, workspaceId: string, id: string): Promise<Message | undefined> {
  const [row] = await selectOne(db, id, workspaceId)
  return row && toMessage(row)
}

export async function listMessages(db: Kysely<Database>, workspaceId: string, streamId: string, limit: number, after?: string): Promise<Message[]> {
  let query = db.selectFrom('messages').selectAll().where('workspace_id', '=', workspaceId).where('stream_id', '=', streamId)
  if (after) query = query.where('id', '>', after)
  const rows = await query.orderBy('id').limit(limit).execute()
  return rows.map(toMessage)
}

/** The stream's latest `count` messages, oldest first (what a task hands its agent). */
export async function listLatestMessages(db: Kysely<Database>, workspaceId: string, streamId: string, count: number): Promise<Message[]> {
  const rows = await db.selectFrom('messages').selectAll().where('workspace_id', '=', workspaceId).where('stream_id', '=', streamId).orderBy('id', 'desc').limit(count).execute()
  return rows.reverse().map(toMessage)
}

/** How many of its stream's latest messages a task hands its agent (docs/runs-and-events.md "Tasks"). */
export const RECENT_MESSAGES = 20

// The recent messages a task hands its agent: only the fields the payload shows (no content to read and parse). The
// limit is written into the SQL: SQLite plans a statement again at every run when a bound parameter is its LIMIT.
const selectRecent = prepared(2, (db, workspaceId: Expression<string>, streamId: Expression<string>) =>
  db
    .selectFrom('messages')
    .select(['id', 'author_id', 'author_type', 'text', 'created_at'])
    .where('workspace_id', '=', workspaceId)
    .where('stream_id', '=', streamId)
    .orderBy('id', 'desc')
    .limit(sql.lit(RECENT_MESSAGES)),
)

/** A message as a task's payload lists it. */
export type RecentMessage = Pick<Message, 'id' | 'authorId' | 'authorType' | 'text' | 'createdAt'>

/** The stream's latest RECENT_MESSAGES messages, oldest first, as a task's payload lists them. */
export async function listRecentMessageSummaries(db: Kysely<Database>, workspaceId: string, streamId: string): Promise<RecentMessage[]> {
  const rows = await selectRecent(db, workspaceId, streamId)
  return rows.reverse().map((row) => ({ id: row.id, authorId: row.author_id, authorType: row.author_type, text: row.text, createdAt: row.created_at }))
}

export type EditOutcome = { message: Message } | { refused: 'not-found' | 'forbidden' | 'stale' | 'streaming'; current?: Message }

/**
 * Replaces a message's content in one statement, if the caller may edit it and — when `revisions` is given —
 * it is still at one of them (a compare-and-set: of concurrent edits at one revision exactly one succeeds).
 * `revisions`: undefined for any; empty when nothing can match. When nothing was changed, says why.
 */
export async function editMessage(
  db: Kysely<Database>,
  edit: { id: string; workspaceId: string; principalId: string; isAdmin: boolean; revisions: number[] | undefined; content: Content; traceparent: string | null },
): Promise<EditOutcome> {
  const content = JSON.stringify(edit.content)
  const text = renderText(edit.content)
  const admin = edit.isAdmin ? 1 : 0
  const { revisions } = edit
  let row: EditedRow | undefined
  if (revisions === undefined) [row] = await editAny(db, content, text, now(), edit.id, edit.workspaceId, edit.principalId, admin)
  else if (revisions.length > 0) {
    row = await db
      .updateTable('messages')
      .set((eb) => ({ content, text, edited_at: now(), revision: eb('revision', '+', 1) }))
      .where('id', '=', edit.id)
      .where('workspace_id', '=', edit.workspaceId)
      .where((eb) => eb.or([eb('author_id', '=', edit.principalId), eb(eb.val(admin), '=', 1)]))
      .where('revision', 'in', revisions)
      .where('status', '<>', 'streaming')
      .returning(EDITED_COLUMNS)
      .executeTakeFirst()
  }
  if (row) {
    // The body's content, as parsed: what JSON.parse would give back from the text just stored.
    const message = editedMessage(row, edit.content, text)
    const json = messageJson(message, content)
    await appendEvent(db, { workspaceId: row.workspace_id, streamId: row.stream_id, type: 'message.edited', data: message, json, traceparent: edit.traceparent })
    return { message }
  }
  const current = await findMessage(db, edit.workspaceId, edit.id)
  if (!current) return { refused: 'not-found' }
  if (current.authorId !== edit.principalId && !edit.isAdmin) return { refused: 'forbidden' }
  if (current.status === 'streaming') return { refused: 'streaming', current }
  return { refused: 'stale', current }
}

export async function listRevisions(db: Kysely<Database>, messageId: string, limit: number, afterRevision = 0): Promise<Revision[]> {
  const rows = await db
    .selectFrom('message_revisions')
    .selectAll()
    .where('message_id', '=', messageId)
    .where('revision', '>', afterRevision)
    .orderBy('revision')
    .limit(limit)
    .execute()
  return rows.map((row) => ({ revision: Number(row.revision), content: JSON.parse(row.content), text: row.text, createdAt: row.created_at }))
}
