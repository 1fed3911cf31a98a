// Agents as JSON text, kept per row and version (versioned-cache.ts), so a read serialises nothing. A read
// still asks the database for the row's version, every time, and uses the text only if the version is the same;
// so an agent changed by another instance, or through any path, is never served stale. Only reads outside a
// transaction fill it (they see committed rows only), never a write that could yet roll back.
// Bounded: at most MAX_CACHED_CHARS characters of JSON per database; the oldest entries go first.
import { dbContext, type DbHandle } from '../db/context.js'
import { VersionedRowCache } from './versioned-cache.js'

declare module '../db/context.js' {
  interface DbContext {
    /** Agents' JSON text by row version (this file), made on first use. */
    agentJson?: RowJsonCache
  }
}

export const MAX_CACHED_CHARS = 16 * 1024 * 1024

/** Agents' JSON text per row version. */
export class RowJsonCache extends VersionedRowCache<string> {
  constructor(maxChars = MAX_CACHED_CHARS) {
    super(maxChars, (json) => json.length)
  }
}

/** The cache of the database `db` is (or is a transaction of): one per database (src/db/context.ts); tests run many. */
export function agentJsonCache(db: DbHandle): RowJsonCache {
  const context = dbContext(db)
  return (context.agentJson ??= new RowJsonCache())
}
