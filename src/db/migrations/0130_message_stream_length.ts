// A streaming message's length so far (UTF-16 code units, as JavaScript and the deltas' offsets count), kept by
// the delta that appends to the text in SQL: the bound on a streamed message and each delta's offset are read
// from it without reading the text back. Only streaming rows are appended to; the column means nothing on others.
// Rows streaming when this lands get their length from the text (exact for text without characters outside the
// Basic Multilingual Plane). Frozen once landed.
import { sql, type Kysely } from 'kysely'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('messages').addColumn('stream_length', 'integer').execute()
  await sql`update messages set stream_length = length(text) where status = 'streaming'`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('messages').dropColumn('stream_length').execute()
}
