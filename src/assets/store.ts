// Asset storage: rows of the `assets` table ↔ API assets, always scoped to one workspace. The content is read
// only by `findAssetContent`, never with the metadata.
import { createHash } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { newId, now } from '../ids.js'
import type { Asset, ImageType } from './schemas.js'

const META = ['id', 'content_type', 'bytes', 'width', 'height', 'sha256', 'created_at'] as const

function toAsset(row: { id: string; content_type: string; bytes: number; width: number; height: number; sha256: string; created_at: string }): Asset {
  return {
    id: row.id,
    contentType: row.content_type as ImageType,
    bytes: Number(row.bytes),
    width: Number(row.width),
    height: Number(row.height),
    sha256: row.sha256,
    createdAt: row.created_at,
  }
}

export async function insertAsset(db: Kysely<Database>, workspaceId: string, image: { contentType: ImageType; content: Buffer; width: number; height: number }): Promise<Asset> {
  const row = {
    id: newId(),
    workspace_id: workspaceId,
    content_type: image.contentType,
    bytes: image.content.length,
    width: image.width,
    height: image.height,
    sha256: createHash('sha256').update(image.content).digest('hex'),
    content: image.content,
    created_at: now(),
  }
  await db.insertInto('assets').values(row).execute()
  return toAsset(row)
}

export async function findAsset(db: Kysely<Database>, workspaceId: string, id: string): Promise<Asset | undefined> {
  const row = await db.selectFrom('assets').select(META).where('id', '=', id).where('workspace_id', '=', workspaceId).executeTakeFirst()
  return row && toAsset(row)
}

export async function findAssetContent(db: Kysely<Database>, workspaceId: string, id: string): Promise<{ contentType: string; sha256: string; content: Buffer } | undefined> {
  const row = await db.selectFrom('assets').select(['content_type', 'sha256', 'content']).where('id', '=', id).where('workspace_id', '=', workspaceId).executeTakeFirst()
  return row && { contentType: row.content_type, sha256: row.sha256, content: Buffer.isBuffer(row.content) ? row.content : Buffer.from(row.content) }
}

export async function deleteAsset(db: Kysely<Database>, workspaceId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('assets').where('id', '=', id).where('workspace_id', '=', workspaceId).executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}
