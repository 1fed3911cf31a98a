// Databases for an event hub under test: one whose reads of a stream's head wait until released, so a feed starts
// after events its readers missed; one whose reads of events fail on demand.
import type { CompiledQuery, Kysely } from 'kysely'
import type { Database } from '../../src/db/database.js'

/**
 * The database, with every read of a stream's head held until `release()`. Its executor has an adapter of its
 * own, so SQLite's shortcut for prepared queries (which runs them on the driver at once) is not taken: they go
 * through `executeQuery`, which holds them.
 */
export function holdingHeadReads(db: Kysely<Database>): { db: Kysely<Database>; release(): void; held(): number } {
  let release!: () => void
  const gate = new Promise<void>((resolve) => (release = resolve))
  let held = 0
  const executor = db.getExecutor()
  const adapter = new Proxy(executor.adapter, {})
  const ownExecutor = new Proxy(executor, { get: (target, property) => (property === 'adapter' ? adapter : Reflect.get(target, property, target)) })
  const proxy = new Proxy(db, {
    get(target, property) {
      if (property === 'getExecutor') return () => ownExecutor
      if (property === 'executeQuery') {
        return async (query: CompiledQuery) => {
          if (query.sql.includes('stream_event_heads')) {
            held += 1
            await gate
          }
          return target.executeQuery(query)
        }
      }
      const value: unknown = Reflect.get(target, property, target)
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value
    },
  })
  return { db: proxy, release, held: () => held }
}

/** The database, whose next `fail` reads of events (set it at any time) fail as if the database were away. */
export function failingEventReads(db: Kysely<Database>): { db: Kysely<Database>; fail: number } {
  const control = { db, fail: 0 }
  control.db = new Proxy(db, {
    get(target, property) {
      if (property === 'selectFrom') {
        return (table: never) => {
          if (table === 'stream_events' && control.fail > 0) {
            control.fail -= 1
            throw new Error('connection terminated unexpectedly')
          }
          return target.selectFrom(table)
        }
      }
      const value: unknown = Reflect.get(target, property, target)
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value
    },
  })
  return control
}
