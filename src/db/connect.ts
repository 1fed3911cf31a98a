// Kysely factory: better-sqlite3 for `sqlite:` URLs (the embedded default, through our batching driver,
// sqlite-driver.ts), pg for `postgres://` URLs.
import { closeSync, mkdirSync, openSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import SqliteDatabase from 'better-sqlite3'
import pg from 'pg'
import { Kysely } from 'kysely'
import { HookedPostgresDialect } from './before-commit.js'
import type { Database } from './database.js'
import { BatchingSqliteDialect, BatchingSqliteDriver } from './sqlite-driver.js'
import { Checkpointer } from './checkpointer.js'

export type DialectName = 'sqlite' | 'postgres'

export interface Db {
  db: Kysely<Database>
  dialect: DialectName
  /** PostgreSQL only: the schema worked in, when not the default search path. */
  schema?: string
  /** PostgreSQL only: connections checked out of the pool now. */
  poolInUse?: () => number
  close(): Promise<void>
}

export interface ConnectOptions {
  /** PostgreSQL only: the schema to work in (tests give each file its own). */
  schema?: string
  /** PostgreSQL only: connections in the pool. */
  poolSize?: number
  /** Told of a fault the database works around (logged as a warning by the app). */
  onWarning?: (message: string, error: unknown) => void
  /** SQLite only: the size the write-ahead log file is cut back to when it restarts (tests make it small). */
  walSizeLimitBytes?: number
}

/**
 * The write-ahead log's file keeps the size of its largest burst unless cut back: after a burst of writes (a
 * checkpoint that copied it all, then the next write restarting the log), SQLite truncates it to this.
 */
export const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024

/** Closing twice is closing once (an app's shutdown and a test's clean-up may both ask). */
function once(close: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined
  return () => (closing ??= close())
}

/**
 * The SQLite files open in this process, by absolute path. Every Kysely instance on one file shares its one
 * connection and driver: a batch holds the write lock until the loop's next turn (sqlite-driver.ts), so a second
 * connection in the same thread would wait on it synchronously, and the batch could never commit.
 */
const openFiles = new Map<string, BatchingSqliteDriver>()

function openSqlite(url: string, options: ConnectOptions): Db {
  const path = url.slice('sqlite:'.length)
  const file = path === ':memory:' ? null : resolve(path)
  const driver = (file && openFiles.get(file)?.share()) || newSqliteDriver(path, file, options)
  const db = new Kysely<Database>({ dialect: new BatchingSqliteDialect(driver) })
  return { db, dialect: 'sqlite', close: once(() => db.destroy()) }
}

/**
 * Only the owner reads what Tandem creates: a new data folder is 0700 and a new database file 0600 (SQLite gives
 * its -wal and -shm files the database file's mode). Existing folders and files keep the modes they have.
 */
function createPrivately(file: string): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 })
  try {
    closeSync(openSync(file, 'wx', 0o600))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
}

function newSqliteDriver(path: string, file: string | null, options: ConnectOptions): BatchingSqliteDriver {
  if (file) createPrivately(file)
  const raw = new SqliteDatabase(path)
  raw.pragma('journal_mode = WAL')
  raw.pragma('synchronous = NORMAL')
  raw.pragma('foreign_keys = ON')
  raw.pragma('busy_timeout = 5000')
  // Savepoint journals (every transaction of a batch is a savepoint, sqlite-driver.ts) and temporary tables in
  // memory, not in temp files: a run's start wrote its savepoint journal to a file once it passed 64 KiB, which
  // made single-row writes 1.5–2× as costly. Queries are paginated, so what SQLite keeps there stays small.
  raw.pragma('temp_store = memory')
  raw.pragma(`journal_size_limit = ${Math.trunc(options.walSizeLimitBytes ?? WAL_SIZE_LIMIT_BYTES)}`)
  if (!file) return new BatchingSqliteDriver(raw)
  // A file's write-ahead log is checkpointed by a thread of its own, not inside a request's COMMIT (checkpointer.ts).
  const checkpointer = new Checkpointer(raw, (error) => options.onWarning?.('SQLite checkpoints are back on the event loop', error))
  const driver = new BatchingSqliteDriver(raw, checkpointer, () => openFiles.delete(file))
  openFiles.set(file, driver)
  return driver
}

// Named prepared statements on PostgreSQL: the server parses and plans a statement once per connection instead of
// at every execution. Every parameterised statement whose text is one of the first MAX_NAMED texts this process
// sends is named by its text (the engine's hot queries are fixed texts: prepared.ts, the event and job
// statements). Left unnamed: texts with `*` (a prepared `select *` fails once a migration adds a column, "cached
// plan must not change result type", while an instance still runs), statements without parameters, and any
// text past the bound (a query built with a varying `in (…)` list makes new texts; the server keeps each named
// statement per connection).
const MAX_NAMED = 256
const statementNames = new Map<string, string>()
function statementName(text: string): string | undefined {
  const known = statementNames.get(text)
  if (known !== undefined || statementNames.size >= MAX_NAMED || text.includes('*') || !/^\s*(select|insert|update|delete|with)\b/i.test(text)) return known
  const name = `tandem_${statementNames.size + 1}`
  statementNames.set(text, name)
  return name
}

type Query = (config: unknown, values?: unknown, callback?: unknown) => unknown

/** Makes a pool's new client name the statements statementName names (every other call goes through unchanged). */
function nameStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as Query
  const named: Query = (config, values, callback) => {
    if (typeof config === 'string' && Array.isArray(values) && values.length > 0 && callback === undefined) {
      const name = statementName(config)
      if (name) return query({ name, text: config, values })
    }
    return query(config, values, callback)
  }
  ;(client as unknown as { query: Query }).query = named
}

function openPostgres(url: string, options: ConnectOptions): Db {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
  })
  // An idle connection the server ends (a restart, a failover, pg_terminate_backend, a dropped database) is an
  // 'error' on the pool: pg discards that client and the next query opens a new one. Unheard, the event would
  // crash the process; it is told as a warning.
  pool.on('error', (error) => options.onWarning?.('the database ended an idle connection; the pool opens a new one when needed', error))
  pool.on('connect', nameStatements)
  const db = new Kysely<Database>({ dialect: new HookedPostgresDialect({ pool }) })
  return { db, dialect: 'postgres', schema: options.schema, poolInUse: () => pool.totalCount - pool.idleCount, close: once(() => db.destroy()) }
}

export function connect(url: string, options: ConnectOptions = {}): Db {
  if (url.startsWith('sqlite:')) return openSqlite(url, options)
  if (/^postgres(ql)?:\/\//.test(url)) return openPostgres(url, options)
  throw new Error(`unsupported database URL scheme: ${url.split(':')[0]}`)
}
