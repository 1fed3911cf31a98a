// Stream storage, scoped to one workspace. Other features ask here whether a stream exists.
import type { Expression, Kysely, Selectable } from 'kysely'
import type { Database } from '../db/database.js'
import type { StreamTable } from './streams.table.js'
import { newId, now } from '../ids.js'
import { notFound } from '../http/problem.js'
import { prepared } from '../db/prepared.js'
import type { CreateStreamBody, Stream } from './schemas.js'


type StreamRow = Selectable<StreamTable>

function toStream(row: StreamRow): Stream {
  return { id: row.id, name: row.name, description: row.description, createdAt: row.created_at }
}

export async function insertStream(db: Kysely<Database>, workspaceId: string, body: CreateStreamBody): Promise<Stream> {
  const row: StreamRow = { id: newId(), workspace_id: workspaceId, name: body.name, description: body.description ?? null, created_at: now() }
  await db.insertInto('streams').values(row).execute()
  return toStream(row)
}

const selectOne = prepared(2, (db, id: Expression<string>, workspaceId: Expression<string>) =>
  db.selectFrom('streams').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId),
)

export async function findStream(db: Kysely<Database>, workspaceId: string, id: string): Promise<Stream | undefined> {
  const [row] = await selectOne(db, id, workspaceId)
  return row && toStream(row)
}

/** The stream, or a 404 problem: for routes nested under a stream. */
export async function requireStream(db: Kysely<Database>, workspaceId: string, id: string): Promise<Stream> {
  const stream = await findStream(db, workspaceId, id)
  if (!stream) throw notFound('Stream')
  return stream
}

export async function listStreams(db: Kysely<Database>, workspaceId: string, limit: number, after?: string): Promise<Stream[]> {
  let query = db.selectFrom('streams').selectAll().where('workspace_id', '=', workspaceId)
  if (after) query = query.where('id', '>', after)
  const rows = await query.orderBy('id').limit(limit).execute()
  return rows.map(toStream)
}
