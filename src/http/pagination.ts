// Cursor pagination: the cursor is the sort key of a page's last row (an id, or a revision number),
// base64url-encoded so that clients treat it as opaque.
import { AppError } from './problem.js'

const ID_KEY = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

export const isIdKey = (key: string) => ID_KEY.test(key)

export function decodeCursor(cursor: string | undefined, isKey: (key: string) => boolean = isIdKey): string | undefined {
  if (cursor === undefined) return undefined
  const key = Buffer.from(cursor, 'base64url').toString('utf8')
  if (!isKey(key) || Buffer.from(key).toString('base64url') !== cursor) {
    throw new AppError('validation-error', 'The query string has 1 problem; see errors.', [
      { pointer: '/query/cursor', detail: 'is not a cursor this API returned' },
    ])
  }
  return key
}

/** `rows` holds up to `limit + 1` items: the extra one only tells that another page exists. */
export function toPage<T>(rows: T[], limit: number, keyOf: (row: T) => string = (row) => (row as { id: string }).id) {
  const data = rows.slice(0, limit)
  const last = data[data.length - 1]
  return { data, nextCursor: rows.length > limit && last !== undefined ? Buffer.from(keyOf(last)).toString('base64url') : null }
}
