// A cache of values per row and row version, bounded by the characters it holds (oldest first out): the agents'
// JSON (json-cache.ts) and what the drafter reads of them (drafting-cache.ts), where a workspace's whole list is
// kept by the database's data mark as its "version". A value is answered only at the version asked for, so a row
// changed by another instance, or through any path, is never served stale.
export class VersionedRowCache<T> {
  private readonly entries = new Map<string, { version: number | string; value: T; chars: number }>()
  private chars = 0

  private readonly maxChars: number
  private readonly charsOf: (value: T) => number

  constructor(
    maxChars: number,
    charsOf: (value: T) => number,
  ) {
    this.maxChars = maxChars
    this.charsOf = charsOf
  }

  /** The value of row `id` at `version`, if kept. */
  get(id: string, version: number | string): T | undefined {
    const entry = this.entries.get(id)
    return entry && entry.version === version ? entry.value : undefined
  }

  /** Whether some version of row `id` is kept. */
  has(id: string): boolean {
    return this.entries.has(id)
  }

  /** Keeps `value` as row `id` at `version` (replacing any other version); returns `value`. */
  set(id: string, version: number | string, value: T): T {
    this.delete(id)
    const chars = this.charsOf(value)
    if (chars > this.maxChars) return value
    this.entries.set(id, { version, value, chars })
    this.chars += chars
    for (const [oldest, entry] of this.entries) {
      if (this.chars <= this.maxChars) break
      this.entries.delete(oldest)
      this.chars -= entry.chars
    }
    return value
  }

  delete(id: string): void {
    const entry = this.entries.get(id)
    if (!entry) return
    this.entries.delete(id)
    this.chars -= entry.chars
  }

  get size(): { entries: number; chars: number } {
    return { entries: this.entries.size, chars: this.chars }
  }
}
