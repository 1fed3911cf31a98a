// Cursor pagination over time-ordered ids: the cursor is the last id of the page, opaque to clients.
import { AppError } from './problem.js'

const CURSOR_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

export function decodeCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined
  const id = Buffer.from(cursor, 'base64url').toString('utf8')
  if (!CURSOR_ID.test(id) || Buffer.from(id).toString('base64url') !== cursor) {
    throw new AppError('validation-error', 'The query string has 1 problem; see errors.', [
      { pointer: '/query/cursor', detail: 'is not a cursor this API returned' },
    ])
  }
  return id
}

/** `rows` holds up to `limit + 1` items: the extra one only tells that another page exists. */
export function toPage<T extends { id: string }>(rows: T[], limit: number): { data: T[]; nextCursor: string | null } {
  const data = rows.slice(0, limit)
  const last = data[data.length - 1]
  return { data, nextCursor: rows.length > limit && last ? Buffer.from(last.id).toString('base64url') : null }
}
