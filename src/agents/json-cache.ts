// Agents as JSON text, kept per row and version (issue 15: "serialising what could be cached per row"). A read
// still asks the database for the row's version, every time, and uses the text only if the version is the same;
// so an agent changed by another instance, or through any path, is never served stale. Only reads outside a
// transaction fill it (they see committed rows only), never a write that could yet roll back.
// Bounded: at most MAX_CACHED_CHARS characters of JSON per database; the oldest entries go first.
import { dbContext, type DbHandle } from '../db/context.js'

declare module '../db/context.js' {
  interface DbContext {
    /** Agents' JSON text by row version (this file), made on first use. */
    agentJson?: RowJsonCache
  }
}

export const MAX_CACHED_CHARS = 16 * 1024 * 1024

interface Entry {
  version: number
  json: string
}

export class RowJsonCache {
  private readonly entries = new Map<string, Entry>()
  private chars = 0

  constructor(private readonly maxChars = MAX_CACHED_CHARS) {}

  /** The text of row `id` at `version`, if kept. */
  get(id: string, version: number): string | undefined {
    const entry = this.entries.get(id)
    return entry && entry.version === version ? entry.json : undefined
  }

  /** Whether some version of row `id` is kept. */
  has(id: string): boolean {
    return this.entries.has(id)
  }

  /** Keeps `json` as row `id` at `version` (replacing any other version); returns `json`. */
  set(id: string, version: number, json: string): string {
    this.delete(id)
    if (json.length > this.maxChars) return json
    this.entries.set(id, { version, json })
    this.chars += json.length
    for (const [oldest, entry] of this.entries) {
      if (this.chars <= this.maxChars) break
      this.entries.delete(oldest)
      this.chars -= entry.json.length
    }
    return json
  }

  delete(id: string): void {
    const entry = this.entries.get(id)
    if (!entry) return
    this.entries.delete(id)
    this.chars -= entry.json.length
  }

  get size(): { entries: number; chars: number } {
    return { entries: this.entries.size, chars: this.chars }
  }
}

/** The cache of the database `db` is (or is a transaction of): one per database (src/db/context.ts); tests run many. */
export function agentJsonCache(db: DbHandle): RowJsonCache {
  const context = dbContext(db)
  return (context.agentJson ??= new RowJsonCache())
}
