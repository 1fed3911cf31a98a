// Work a transaction defers to its very end, on PostgreSQL: run on the transaction's connection just before its
// COMMIT, in the order it was deferred, and dropped if the transaction rolls back. A failure of the work fails
// the commit (the transaction then rolls back, as if the work had failed where it was asked for).
//
// The event log uses it (src/events/store.ts): a stream's head row, which every writer of the stream waits on,
// is then locked by the transaction's last statement only, and all of a transaction's events of a stream are
// written in one round trip with one notification.
//
// The hook is in the driver (HookedPostgresDriver, used by db/connect.ts): Kysely commits through
// `driver.commitTransaction(connection)` once the transaction's callback has returned, so every transaction of
// the database runs its deferred work, however it was started. SQLite has no round trips to save and runs one
// transaction at a time: there, and outside a transaction, `defersToCommit` answers false and the caller does
// the work at once.
import { PostgresAdapter, PostgresDialect, PostgresDriver, type DatabaseConnection, type DialectAdapter, type Driver, type PostgresDialectConfig } from 'kysely'

/** The work deferred by each open transaction, by its connection (a connection holds one transaction at a time). */
const deferred = new WeakMap<DatabaseConnection, Array<() => Promise<void>>>()
/** The connections of hooked drivers: only theirs run deferred work. */
const hooked = new WeakSet<DatabaseConnection>()

interface TransactionHandle {
  readonly isTransaction: boolean
  getExecutor(): { adapter: DialectAdapter; provideConnection<T>(consumer: (connection: DatabaseConnection) => Promise<T>): Promise<T> }
}

/** The adapter of a hooked dialect: tells, without a round trip, that its transactions run deferred work. */
class HookedPostgresAdapter extends PostgresAdapter {}

/** Whether `db` is a transaction whose commit runs deferred work (else: do the work at once). */
export function defersToCommit(db: TransactionHandle): boolean {
  return db.isTransaction && db.getExecutor().adapter instanceof HookedPostgresAdapter
}

/** Defers `work` to just before the commit of `trx`, a transaction for which defersToCommit is true. */
export async function deferToCommit(trx: TransactionHandle, work: () => Promise<void>): Promise<void> {
  const connection = await trx.getExecutor().provideConnection(async (c) => c)
  if (!hooked.has(connection)) throw new Error('deferToCommit: not a transaction of a hooked PostgreSQL database')
  const list = deferred.get(connection)
  if (list) list.push(work)
  else deferred.set(connection, [work])
}

async function runDeferred(connection: DatabaseConnection): Promise<void> {
  // Work may defer more work: run until none is left.
  for (let list = deferred.get(connection); list?.length; list = deferred.get(connection)) {
    deferred.delete(connection)
    for (const work of list) await work()
  }
}

class HookedPostgresDriver extends PostgresDriver {
  override async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await super.acquireConnection()
    hooked.add(connection)
    return connection
  }

  override async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await runDeferred(connection)
    await super.commitTransaction(connection)
  }

  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    deferred.delete(connection)
    await super.rollbackTransaction(connection)
  }

  override async releaseConnection(connection: Parameters<PostgresDriver['releaseConnection']>[0]): Promise<void> {
    deferred.delete(connection)
    await super.releaseConnection(connection)
  }
}

/** Kysely's PostgreSQL dialect with a driver that runs each transaction's deferred work before its commit. */
export class HookedPostgresDialect extends PostgresDialect {
  readonly #config: PostgresDialectConfig
  constructor(config: PostgresDialectConfig) {
    super(config)
    this.#config = config
  }

  override createDriver(): Driver {
    return new HookedPostgresDriver(this.#config)
  }

  override createAdapter(): DialectAdapter {
    return new HookedPostgresAdapter()
  }
}
