// Test helpers: build the app on a real database — a fresh SQLite file, or a fresh PostgreSQL schema —
// once per dialect. PostgreSQL runs when TANDEM_TEST_POSTGRES_URL is set; TANDEM_TEST_DIALECT narrows.
import { randomBytes } from 'node:crypto'
import { rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import type { FastifyInstance, InjectOptions } from 'fastify'
import { buildApp } from '../src/app.js'
import { loadConfig, type Config } from '../src/config.js'
import { watchStatuses } from './openapi-statuses.js'

export type Dialect = 'sqlite' | 'postgres'

const POSTGRES_URL = process.env.TANDEM_TEST_POSTGRES_URL

/**
 * The vault key of every app and server process a test starts (PostgreSQL refuses to start without one, and
 * with SQLite it keeps secret.key files out of the temporary directory). Child processes inherit it.
 */
export const TEST_SECRET_KEY = (process.env.TANDEM_SECRET_KEY ??= randomBytes(32).toString('base64'))

export function dialects(): Dialect[] {
  const all: Dialect[] = POSTGRES_URL ? ['sqlite', 'postgres'] : ['sqlite']
  const only = process.env.TANDEM_TEST_DIALECT
  return only ? all.filter((d) => d === only) : all
}

/**
 * The databases the console's browser tests run on: one, PostgreSQL when it is set, else SQLite. The browser drives
 * the same pages and the same API over either (the API's own tests run on both), and CI's two lanes cover both:
 * PostgreSQL in the lane that has it, SQLite in the other. TANDEM_TEST_BROWSER_DIALECTS=all runs every database.
 */
export function browserDialects(): Dialect[] {
  const all = dialects()
  return process.env.TANDEM_TEST_BROWSER_DIALECTS === 'all' ? all : all.slice(-1)
}

/** One statement as the PostgreSQL test server's admin (create or drop a database, change its settings). */
export async function adminQuery(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}

export interface TestDatabase {
  url: string
  schema?: string
  drop(): Promise<void>
}

/**
 * A fresh, empty database: a new SQLite file, or a new PostgreSQL schema — or, with `ownDatabase`, a new
 * PostgreSQL database, for a server process that knows only its DATABASE_URL.
 */
export async function freshDatabase(dialect: Dialect, options: { ownDatabase?: boolean } = {}): Promise<TestDatabase> {
  const name = `t_${randomBytes(6).toString('hex')}`
  if (dialect === 'sqlite') {
    const file = join(tmpdir(), `tandem-${name}.db`)
    const drop = async () => {
      for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true })
    }
    return { url: `sqlite:${file}`, drop }
  }
  if (!POSTGRES_URL) throw new Error('TANDEM_TEST_POSTGRES_URL is not set')
  if (options.ownDatabase) {
    await adminQuery(`create database ${name}`)
    const url = new URL(POSTGRES_URL)
    url.pathname = `/${name}`
    return { url: url.toString(), drop: () => adminQuery(`drop database ${name} with (force)`) }
  }
  await adminQuery(`create schema ${name}`)
  // `<name>_jobs`: graphile-worker's schema beside it (see app.ts).
  return { url: POSTGRES_URL, schema: name, drop: () => adminQuery(`drop schema if exists ${name}_jobs cascade; drop schema ${name} cascade`) }
}

/**
 * The app on a fresh database. On PostgreSQL, graphile-worker's runners LISTEN on database-wide channels (a new
 * worker schema anywhere in the database tells every runner there to stop): so by default an app on a shared
 * test database runs no jobs (TANDEM_WORKERS=0), and a test that asks for workers gets its own database.
 */
export async function build(dialect: Dialect, env: Record<string, string> = {}, options: { ownDatabase?: boolean } = {}): Promise<FastifyInstance> {
  // Workers asked for on PostgreSQL: a database of their own, or another file's migration would stop them mid-run.
  const ownDatabase = options.ownDatabase ?? (dialect === 'postgres' && env.TANDEM_WORKERS !== undefined && env.TANDEM_WORKERS !== '0')
  const database = await freshDatabase(dialect, { ownDatabase })
  const workers = dialect === 'postgres' && !ownDatabase ? '0' : '8'
  const config: Config = loadConfig({ LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent', TANDEM_WORKERS: workers, TANDEM_SECRET_KEY: TEST_SECRET_KEY, ...env, DATABASE_URL: database.url })
  const app = await buildApp(config, { connect: { schema: database.schema, poolSize: 4 } })
  app.addHook('onClose', async () => {
    // onClose hooks run last-added first: close the connections before dropping what they point at.
    await app.database.close()
    await database.drop()
  })
  // Added after: it runs before the hook above (last-added first). Fails the close on an undeclared status.
  watchStatuses(app)
  await app.ready()
  return app
}

/** `app.inject` with a JSON body. */
export function send(app: FastifyInstance, method: InjectOptions['method'], url: string, body?: unknown, headers: Record<string, string> = {}) {
  return app.inject({
    method,
    url,
    ...(body === undefined ? {} : { payload: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } }),
    ...(body === undefined ? { headers } : {}),
  })
}

/** The JSON Pointers of a problem response's `errors`. */
export function pointers(response: { json(): unknown }): string[] {
  const problem = response.json() as { errors?: Array<{ pointer: string }> }
  return (problem.errors ?? []).map((e) => e.pointer).sort()
}
