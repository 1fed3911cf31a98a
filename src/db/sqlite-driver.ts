// The SQLite driver under Kysely (in place of Kysely's own SqliteDriver): the one better-sqlite3 connection,
// lent to one holder at a time as Kysely's driver does, plus two things Kysely's cannot do.
//
// Group commit. A transaction does not COMMIT on its own: it runs inside a savepoint of a batch transaction,
// and at its commit the savepoint is released, the connection is lent to the next transaction, and its commit
// resolves once the whole batch has committed: right after the event loop's I/O phase (setImmediate), or at once
// when the batch holds MAX_BATCH transactions or a query outside any transaction wants the connection. A lone
// writer (no other transaction committed in this turn of the loop or the last) commits at once. Most of a
// small write's cost in SQLite is its COMMIT (the WAL frames, and the full-text index writing a segment per
// commit), so 32 concurrent writers pay it a few times per loop turn instead of 32 times.
// What stays true:
// - a transaction is atomic: its work is in its savepoint; when it fails, ROLLBACK TO undoes its work only;
// - nobody is told of a commit before it is durable (as durable as synchronous=NORMAL makes any commit): the
//   commit promise resolves after the batch's COMMIT, and a failed COMMIT rejects every transaction of the batch;
// - reads outside a transaction see committed data only: a query outside any transaction commits an open
//   batch first. Only transactions of the same batch see each other's work before it commits, and they commit
//   or fail together, as if they had run one after the other;
// - SQLite rolling the whole transaction back by itself (a full disk, an I/O error) fails every transaction of
//   the batch.
//
// Three more ways to take part in a batch:
// - afterCommit(hook): code inside a transaction asks for a call once its batch has committed (or to be told the
//   transaction was abandoned): the job worker starts a job at the commit of the transaction that created it;
// - atBatchCommit(sql, parameters): code inside a transaction hands over a write that nothing in the transaction
//   reads back, to run just before the batch's COMMIT, outside every savepoint, in the order the transactions
//   committed: the agents' full-text entries. FTS5 writes its pending entries as a segment of their own whenever
//   a savepoint opens, so written in their transactions they cost a segment each; written at the batch's end, one
//   segment for the batch. Dropped with a transaction that rolls back; one that fails at the COMMIT fails the
//   batch, as a failed COMMIT does. A reader of such a table inside a transaction calls runBatchWrites() first,
//   so it sees what the batch's earlier transactions wrote, as everywhere else;
// - writeInBatch(sql, parameters): one statement joins the open batch, without a transaction or a savepoint (a
//   statement is atomic by itself), when nobody holds the connection: a finished job's deletion.
//
// Queries at once. Kysely runs each query through several asynchronous layers (connection provider, mutex,
// driver); better-sqlite3 is synchronous. runNow() runs a compiled query on the spot when its caller's
// transaction holds the connection or nobody holds it, and prepared.ts uses it for the hot queries.
import type SqliteDatabase from 'better-sqlite3'
import type { Checkpointer } from './checkpointer.js'
import { contextForAdapter, dbContext, type DbHandle } from './context.js'
import { keptOrMade } from '../kept.js'
import {
  SelectQueryNode,
  SqliteDialect,
  type CompiledQuery,
  type DatabaseConnection,
  type DialectAdapter,
  type Driver,
  type QueryResult,
} from 'kysely'

/** A batch commits at once when it holds this many transactions (bounds what one failed COMMIT takes with it). */
export const MAX_BATCH = 64
const STATEMENT_CACHE_SIZE = 500
const MEMBER = 'tandem_batch_member'
const DATA_MARK = 'select total_changes(), data_version from pragma_data_version'

/** Fault injection for the crash tests: the process kills itself before the COMMIT of a batch of several transactions. Never set in production. */
const CRASH_BEFORE_GROUP_COMMIT = process.env.TANDEM_TEST_FAULT === 'sqlite:before-group-commit'

/** What a transaction asks to happen once its writes are committed (afterCommit). */
export interface CommitHook {
  /** The transaction's batch committed: its writes are durable. Called once, in a microtask after the COMMIT. */
  committed(): void
  /** The transaction rolled back, or its batch's COMMIT failed: none of its writes exist. */
  abandoned(): void
}

/** A write handed over for the batch's end (atBatchCommit). */
interface BatchWrite {
  sql: string
  parameters: readonly unknown[]
}

interface Member {
  resolve: () => void
  reject: (error: unknown) => void
  hooks: CommitHook[] | null
}

interface Batch {
  /** Transactions released into the batch, waiting for its COMMIT. */
  committed: Member[]
  /** Their writes for the batch's end (atBatchCommit), in commit order. */
  writes: BatchWrite[]
}

function settleMember(member: Member, error?: unknown): void {
  if (error === undefined) {
    member.resolve()
    for (const hook of member.hooks ?? []) queueMicrotask(hook.committed)
  } else {
    member.reject(error)
    for (const hook of member.hooks ?? []) hook.abandoned()
  }
}

/** What a holder of the connection is lent: Kysely's DatabaseConnection. */
class Lease implements DatabaseConnection {
  /** Inside a transaction (its savepoint is open). */
  inTransaction = false
  /** What the transaction asked to happen at its commit (afterCommit). */
  hooks: CommitHook[] | null = null
  /** Its writes for the batch's end (atBatchCommit). */
  writes: BatchWrite[] | null = null
  /** The batch's writes that runBatchWrites() ran inside this transaction's savepoint: due again if it rolls back. */
  ranForBatch: BatchWrite[] | null = null

  private readonly driver: BatchingSqliteDriver

  constructor(driver: BatchingSqliteDriver) {
    this.driver = driver
  }

  executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    return Promise.resolve(this.driver.execute<R>(this.inTransaction, compiled))
  }

  async *streamQuery<R>(compiled: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    if (!SelectQueryNode.is(compiled.query)) throw new Error('the SQLite driver only streams select queries')
    if (!this.inTransaction) this.driver.commitOpenBatch()
    for (const row of this.driver.prepare(compiled.sql).iterate(compiled.parameters as unknown[])) yield { rows: [row as R] }
  }
}

export interface BatchStats {
  /** Transactions committed (each in some batch). */
  transactions: number
  /** Physical COMMITs. */
  commits: number
}

export class BatchingSqliteDriver implements Driver {
  private holder: Lease | null = null
  private readonly waiting: Array<{ lease: Lease; resume: () => void }> = []
  private batch: Batch | null = null
  private commitScheduled = false
  /** The batch's commit came due while the connection was lent out: commit when it is given back. */
  private commitWhenFree = false
  /** Transactions committed in this turn of the event loop and in the last one. */
  private readonly turns = { now: 0, last: 0, counting: false }
  private readonly statements = new Map<string, SqliteDatabase.Statement>()
  readonly stats: BatchStats = { transactions: 0, commits: 0 }

  /** Kysely instances on this connection: it closes when the last one is destroyed. */
  private users = 1

  readonly raw: SqliteDatabase.Database
  /** Told of every commit (the write-ahead log grew); absent for a database in memory. */
  readonly checkpointer?: Checkpointer
  private readonly onClosed?: () => void

  constructor(
    raw: SqliteDatabase.Database,
    checkpointer?: Checkpointer,
    onClosed?: () => void,
  ) {
    this.raw = raw
    this.checkpointer = checkpointer
    this.onClosed = onClosed
  }

  async init(): Promise<void> {}

  /** better-sqlite3 compiles a statement on every prepare(): keep them, by SQL text. */
  prepare(sql: string): SqliteDatabase.Statement {
    return keptOrMade(this.statements, sql, STATEMENT_CACHE_SIZE, (text) => this.raw.prepare(text))
  }

  private exec(sql: string): void {
    this.prepare(sql).run()
  }

  execute<R>(inTransaction: boolean, compiled: CompiledQuery): QueryResult<R> {
    if (!inTransaction) this.commitOpenBatch()
    const statement = this.prepare(compiled.sql)
    const parameters = compiled.parameters as unknown[]
    // A write outside a transaction commits on its own (… RETURNING ones are readers too): the log grew.
    if (!inTransaction && !statement.readonly) this.checkpointer?.committed()
    if (statement.reader) return { rows: statement.all(parameters) as R[] }
    const { changes, lastInsertRowid } = statement.run(parameters)
    return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] }
  }

  /**
   * A mark of the data's state, for caches of what queries read: it changes whenever a row may have changed — a
   * row changed through this connection (total_changes(), which counts every row any statement changed, in
   * triggers too, and never goes back, not even when a change rolls back) or a commit through any other
   * connection, in this process or another (PRAGMA data_version). Read outside any transaction, after the open
   * batch commits, and only when nobody holds the connection (else undefined): what is read after it, while the
   * mark stays the same, is what a read now would see.
   */
  dataMark(): string | undefined {
    if (this.holder !== null) return undefined
    this.commitOpenBatch()
    const [changes, version] = this.prepare(DATA_MARK).raw().get() as [number, number]
    return `${version}:${changes}`
  }

  /**
   * Runs a compiled query now if it can: in the caller's transaction (`inTransaction`: the caller is a
   * transaction, which holds the connection), or outside any when nobody holds the connection. Undefined when
   * the query must wait for the connection (take Kysely's way then).
   */
  runNow<R>(inTransaction: boolean, compiled: CompiledQuery): QueryResult<R> | undefined {
    if (inTransaction ? !this.holder?.inTransaction : this.holder !== null) return undefined
    return this.execute<R>(inTransaction, compiled)
  }

  /**
   * Asks for `hook` once the transaction now holding the connection commits (or is abandoned); false when no
   * transaction holds it. A transaction's code runs while it holds the connection, so a caller inside one names
   * its own.
   */
  afterCommit(hook: CommitHook): boolean {
    const lease = this.holder
    if (!lease?.inTransaction) return false
    ;(lease.hooks ??= []).push(hook)
    return true
  }

  /**
   * Hands over a write to run just before the COMMIT of the batch of the transaction now holding the connection,
   * outside its savepoint (see the header); false when no transaction holds it (run it now then).
   */
  atBatchCommit(sql: string, parameters: readonly unknown[]): boolean {
    const lease = this.holder
    if (!lease?.inTransaction) return false
    ;(lease.writes ??= []).push({ sql, parameters })
    return true
  }

  /**
   * Runs now the writes handed over for the batch's end, the batch's and then the caller's own: call inside a
   * transaction before reading what they write. Outside one, any query commits the open batch, with its writes.
   */
  runBatchWrites(): void {
    const lease = this.holder
    if (!lease?.inTransaction) return
    const batch = this.batch
    if (batch && batch.writes.length > 0) {
      const writes = batch.writes
      batch.writes = []
      // Inside this transaction's savepoint: if it rolls back, they are undone with it and due again.
      ;(lease.ranForBatch ??= []).push(...writes)
      this.runWrites(writes)
    }
    if (lease.writes) {
      const writes = lease.writes
      lease.writes = null
      this.runWrites(writes)
    }
  }

  private runWrites(writes: readonly BatchWrite[]): void {
    for (const write of writes) this.prepare(write.sql).run(write.parameters as unknown[])
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const lease = new Lease(this)
    if (this.holder === null) this.holder = lease
    else await new Promise<void>((resume) => this.waiting.push({ lease, resume }))
    return lease
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    this.release(connection as Lease)
  }

  private release(lease: Lease): void {
    if (this.holder !== lease) return // given back early, at its commit
    this.holder = null
    if (this.commitWhenFree) this.commitOpenBatch()
    const next = this.waiting.shift()
    if (next) {
      this.holder = next.lease
      next.resume()
    }
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    if (!this.batch) {
      this.exec('begin')
      this.batch = { committed: [], writes: [] }
    }
    this.exec(`savepoint ${MEMBER}`)
    ;(connection as Lease).inTransaction = true
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const lease = connection as Lease
    this.exec(`release ${MEMBER}`)
    lease.inTransaction = false
    const hooks = lease.hooks
    lease.hooks = null
    const batch = this.batch as Batch
    if (lease.writes) batch.writes.push(...lease.writes)
    lease.writes = null
    lease.ranForBatch = null
    const committed = this.join(batch, hooks)
    this.release(lease)
    return committed
  }

  /** A member is released into the batch: its promise settles with the batch's COMMIT, which comes now or later. */
  private join(batch: Batch, hooks: CommitHook[] | null = null): Promise<void> {
    const committed = new Promise<void>((resolve, reject) => batch.committed.push({ resolve, reject, hooks }))
    // A lone writer (the only transaction of this turn of the loop and of the last) commits at once: waiting for
    // the turn to end would only add latency to a chain of transactions run one after the other (a run's steps).
    const lone = this.countInTurn() === 1 && this.turns.last <= 1 && batch.committed.length === 1
    if (lone || batch.committed.length >= MAX_BATCH) this.commitOpenBatch()
    else this.scheduleCommit()
    return committed
  }

  /**
   * A write of one statement that commits with the open batch as a transaction of its own would, without a
   * transaction's cost (Kysely's layers, a savepoint): only while nobody holds the connection; undefined otherwise
   * (take a transaction then). Resolves once its batch has committed. A statement that fails is undone alone (a
   * statement is atomic within a transaction) and throws; the batch goes on.
   */
  writeInBatch(sql: string, parameters: readonly unknown[]): Promise<void> | undefined {
    if (this.holder !== null) return undefined
    if (!this.batch) {
      this.exec('begin')
      this.batch = { committed: [], writes: [] }
    }
    const batch = this.batch
    try {
      this.prepare(sql).run(parameters as unknown[])
    } catch (error) {
      if (!this.raw.inTransaction) {
        // SQLite rolled the whole batch back itself (SQLITE_FULL, SQLITE_IOERR…): none of it was committed.
        this.batch = null
        for (const member of batch.committed) settleMember(member, error)
      } else if (batch.committed.length === 0) {
        this.exec('rollback')
        this.batch = null
      }
      throw error
    }
    return this.join(batch)
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const lease = connection as Lease
    // Kysely rolls back a transaction whose commit failed: it was released into a batch whose COMMIT failed,
    // and that batch is rolled back already.
    if (!lease.inTransaction) return
    lease.inTransaction = false
    for (const hook of lease.hooks ?? []) hook.abandoned()
    lease.hooks = null
    lease.writes = null
    const ranForBatch = lease.ranForBatch
    lease.ranForBatch = null
    const batch = this.batch as Batch
    if (!this.raw.inTransaction) {
      // SQLite rolled the whole batch back itself (SQLITE_FULL, SQLITE_IOERR…): none of it was committed.
      this.batch = null
      const error = new Error('SQLite rolled back the transaction, and with it the transactions committed in the same batch')
      for (const member of batch.committed) settleMember(member, error)
      return
    }
    this.exec(`rollback to ${MEMBER}`)
    this.exec(`release ${MEMBER}`)
    // The batch's writes it ran (runBatchWrites) were undone with it: due again, before any handed over since.
    if (ranForBatch) batch.writes.unshift(...ranForBatch)
    if (batch.committed.length === 0) {
      this.exec('rollback')
      this.batch = null
    }
  }

  /** Counts a commit in this turn of the event loop (turns end at the check phase); returns the count so far. */
  private countInTurn(): number {
    if (!this.turns.counting) {
      this.turns.counting = true
      setImmediate(this.endTurn)
    }
    return ++this.turns.now
  }

  /** At the end of a turn that had commits, counts the next turn too: a turn without any makes `last` 0. */
  private readonly endTurn = () => {
    this.turns.last = this.turns.now
    this.turns.now = 0
    this.turns.counting = this.turns.last > 0
    if (this.turns.counting) setImmediate(this.endTurn)
  }

  private scheduleCommit(): void {
    if (this.commitScheduled) return
    this.commitScheduled = true
    setImmediate(() => {
      this.commitScheduled = false
      if (this.holder === null) this.commitOpenBatch()
      else if (this.batch) this.commitWhenFree = true
    })
  }

  /** Commits the open batch, if any, and settles its transactions. Only while nobody is inside a transaction. */
  commitOpenBatch(): void {
    this.commitWhenFree = false
    const batch = this.batch
    if (!batch) return
    this.batch = null
    if (CRASH_BEFORE_GROUP_COMMIT && batch.committed.length > 1) process.kill(process.pid, 'SIGKILL')
    try {
      this.runWrites(batch.writes)
      this.exec('commit')
    } catch (error) {
      if (this.raw.inTransaction) this.exec('rollback')
      for (const member of batch.committed) settleMember(member, error)
      return
    }
    this.stats.commits++
    this.stats.transactions += batch.committed.length
    this.checkpointer?.committed()
    for (const member of batch.committed) settleMember(member)
    this.checkpointer?.finishIfDue()
  }

  /** One more Kysely instance on this connection. */
  share(): this {
    this.users++
    return this
  }

  async destroy(): Promise<void> {
    if (--this.users > 0) return
    this.commitOpenBatch()
    await this.checkpointer?.close()
    this.raw.close()
    this.onClosed?.()
  }
}

/** Kysely's SQLite dialect on a batching driver. */
export class BatchingSqliteDialect extends SqliteDialect {
  private readonly driver: BatchingSqliteDriver

  constructor(driver: BatchingSqliteDriver) {
    super({ database: driver.raw })
    this.driver = driver
  }

  override createDriver(): Driver {
    return this.driver
  }

  override createAdapter(): DialectAdapter {
    const adapter = super.createAdapter()
    contextForAdapter(adapter, { sqlite: this.driver })
    return adapter
  }
}

/** The batching driver under `db` (a database, or one of its transactions), if it is on SQLite. */
export function sqliteDriverOf(db: DbHandle): BatchingSqliteDriver | undefined {
  return dbContext(db).sqlite
}
