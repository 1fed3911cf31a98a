// Kysely factory: better-sqlite3 for `sqlite:` URLs (the embedded default), pg for `postgres://` URLs.
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import SqliteDatabase from 'better-sqlite3'
import pg from 'pg'
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely'
import type { Database } from './database.js'

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
}

const STATEMENT_CACHE_SIZE = 500

/** Closing twice is closing once (an app's shutdown and a test's clean-up may both ask). */
function once(close: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined
  return () => (closing ??= close())
}

/** better-sqlite3 compiles a statement on every `prepare`; Kysely prepares per query, so keep them. */
function withStatementCache(raw: SqliteDatabase.Database) {
  const statements = new Map<string, SqliteDatabase.Statement>()
  return {
    close: () => raw.close(),
    prepare(sql: string) {
      let statement = statements.get(sql)
      if (!statement) {
        statement = raw.prepare(sql)
        if (statements.size >= STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value as string)
        statements.set(sql, statement)
      }
      return statement
    },
  }
}

function openSqlite(url: string): Db {
  const path = url.slice('sqlite:'.length)
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const raw = new SqliteDatabase(path)
  raw.pragma('journal_mode = WAL')
  raw.pragma('synchronous = NORMAL')
  raw.pragma('foreign_keys = ON')
  raw.pragma('busy_timeout = 5000')
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(raw) }) })
  return { db, dialect: 'sqlite', close: once(() => db.destroy()) }
}

function openPostgres(url: string, options: ConnectOptions): Db {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
  })
  // An idle connection the server ends (a restart, a failover, pg_terminate_backend, a dropped database) is an
  // 'error' on the pool: pg discards that client and the next query opens a new one. Unheard, the event would
  // crash the process.
  pool.on('error', () => {})
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
  return { db, dialect: 'postgres', schema: options.schema, poolInUse: () => pool.totalCount - pool.idleCount, close: once(() => db.destroy()) }
}

export function connect(url: string, options: ConnectOptions = {}): Db {
  if (url.startsWith('sqlite:')) return openSqlite(url)
  if (/^postgres(ql)?:\/\//.test(url)) return openPostgres(url, options)
  throw new Error(`unsupported database URL scheme: ${url.split(':')[0]}`)
}
