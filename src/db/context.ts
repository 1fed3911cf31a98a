// What travels with a database besides its SQL: one typed object per Kysely instance, shared by every transaction
// of it. Code handed only a `db` or a `trx` (the state machine, a job handler, a store) finds here the vault that
// seals its secrets, the job runtime its transaction enqueues into, its caches and, on SQLite, the driver under
// it. buildApp fills it in (attachVault, createJobs); nothing else holds these per database.
//
// Each slot is declared by the module that owns it, by declaration merging — `declare module '../db/context.js'
// { interface DbContext { vault?: Vault } }` in src/credentials/vault.ts — so this file imports no feature.
//
// It is reached through the handle's dialect adapter, the one object a Kysely instance and its transactions
// share (a transaction is a new Kysely instance over the same adapter and a connection-bound executor).
import type { DialectAdapter } from 'kysely'
import type { BatchingSqliteDriver } from './sqlite-driver.js'
import type { InsightListener } from '../insights/events.js'

/** The slots: this file's own; the others' owners add theirs (see above). */
export interface DbContext {
  /** SQLite only: the batching driver under this database (src/db/sqlite-driver.ts). */
  sqlite?: BatchingSqliteDriver
  /** Told of decisions, ended waits, settled tasks and finished runs (src/insights/events.ts: metrics, traces). */
  insightListeners?: InsightListener[]
  /** Traces are exported (src/tracing): the engine then tells of settled tasks and finished runs too. */
  tracesOn?: boolean
}

export interface DbHandle {
  getExecutor(): { adapter: DialectAdapter }
}

const contexts = new WeakMap<DialectAdapter, DbContext>()

/** The context of the database `db` is (or is a transaction of); an empty one is made on first use. */
export function dbContext(db: DbHandle): DbContext {
  const adapter = db.getExecutor().adapter
  let context = contexts.get(adapter)
  if (!context) contexts.set(adapter, (context = {}))
  return context
}

/** The context made for a new dialect adapter (by a dialect of ours, before any Kysely instance uses it). */
export function contextForAdapter(adapter: DialectAdapter, context: DbContext): void {
  contexts.set(adapter, context)
}
