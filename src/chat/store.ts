// Message storage: messages and their earlier revisions. An edit is a compare-and-set on `revision`
// inside one transaction, so that concurrent edits never lose a revision.
import type { Kysely, Selectable, Transaction } from 'kysely'
import type { Database } from '../db/database.js'
import { newId, now } from '../ids.js'
import type { Content, Message, Revision } from './schemas.js'
import { renderText } from './richtext.js'

export interface MessageTable {
  id: string
  workspace_id: string
  stream_id: string
  author_id: string
  content: string
  text: string
  revision: number
  created_at: string
  edited_at: string | null
}

export interface MessageRevisionTable {
  message_id: string
  revision: number
  content: string
  text: string
  created_at: string
}

type MessageRow = Selectable<MessageTable>

function toMessage(row: MessageRow): Message {
  return {
    id: row.id,
    streamId: row.stream_id,
    authorId: row.author_id,
    content: JSON.parse(row.content),
    text: row.text,
    revision: Number(row.revision),
    createdAt: row.created_at,
    editedAt: row.edited_at,
  }
}

export async function insertMessage(
  db: Kysely<Database>,
  input: { workspaceId: string; streamId: string; authorId: string; content: Content },
): Promise<Message> {
  const row: MessageRow = {
    id: newId(),
    workspace_id: input.workspaceId,
    stream_id: input.streamId,
    author_id: input.authorId,
    content: JSON.stringify(input.content),
    text: renderText(input.content),
    revision: 1,
    created_at: now(),
    edited_at: null,
  }
  await db.insertInto('messages').values(row).execute()
  return toMessage(row)
}

export async function findMessage(db: Kysely<Database> | Transaction<Database>, workspaceId: string, id: string): Promise<Message | undefined> {
  const row = await db.selectFrom('messages').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId).executeTakeFirst()
  return row && toMessage(row)
}

export async function listMessages(db: Kysely<Database>, workspaceId: string, streamId: string, limit: number, after?: string): Promise<Message[]> {
  let query = db.selectFrom('messages').selectAll().where('workspace_id', '=', workspaceId).where('stream_id', '=', streamId)
  if (after) query = query.where('id', '>', after)
  const rows = await query.orderBy('id').limit(limit).execute()
  return rows.map(toMessage)
}

/**
 * Replaces the content of `current` if it is still at `current.revision`, keeping the old content as a
 * revision. Returns the edited message, or undefined when another edit got there first.
 */
export async function replaceContent(trx: Transaction<Database>, current: Message, content: Content): Promise<Message | undefined> {
  const editedAt = now()
  const updated = await trx
    .updateTable('messages')
    .set({ content: JSON.stringify(content), text: renderText(content), revision: current.revision + 1, edited_at: editedAt })
    .where('id', '=', current.id)
    .where('revision', '=', current.revision)
    .returningAll()
    .executeTakeFirst()
  if (!updated) return undefined
  await trx
    .insertInto('message_revisions')
    .values({
      message_id: current.id,
      revision: current.revision,
      content: JSON.stringify(current.content),
      text: current.text,
      created_at: current.editedAt ?? current.createdAt,
    })
    .execute()
  return toMessage(updated)
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
