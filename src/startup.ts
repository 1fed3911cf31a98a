// Why the server could not start, in one line naming the cause and the variable to change. The stack
// is for LOG_LEVEL=debug; a password in DATABASE_URL is never printed.
import { existsSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import type { Config } from './config.js'

type SystemError = Error & { code?: string; syscall?: string; address?: string; port?: number; hostname?: string }

function databaseTarget(url: string): { host: string; database: string; user: string } {
  const parsed = new URL(url)
  return { host: `${parsed.hostname || 'localhost'}:${parsed.port || 5432}`, database: decodeURIComponent(parsed.pathname.slice(1)) || 'postgres', user: decodeURIComponent(parsed.username) }
}

/** Errors can come wrapped (AggregateError from a multi-address connect, `cause` chains): find the informative one. */
function rootOf(error: unknown): SystemError {
  let current = error as SystemError & { errors?: unknown[]; cause?: unknown }
  for (let depth = 0; depth < 5; depth++) {
    if (current.code) return current
    const next = current.errors?.[0] ?? current.cause
    if (!next) break
    current = next as typeof current
  }
  return current
}

/** `phase`: 'listen' when binding HOST:PORT failed, else 'build' (opening and migrating the database). */
export function describeStartupError(error: unknown, config: Config, phase: 'build' | 'listen'): string {
  const e = rootOf(error)
  if (phase === 'listen') {
    if (e.code === 'EADDRINUSE') return `port ${config.port} on ${config.host} is already in use; set PORT to a free port (or 0 to pick one)`
    if (e.code === 'EACCES') return `not allowed to listen on port ${config.port}; set PORT to 1024 or above`
    if (e.code === 'EADDRNOTAVAIL') return `${config.host} is not an address of this machine; set HOST (e.g. 127.0.0.1 or 0.0.0.0)`
    if (e.code === 'ENOTFOUND' || e.code === 'EAI_AGAIN') return `cannot resolve HOST ${config.host}; set HOST`
    return `cannot listen on ${config.host}:${config.port}: ${e.message}; check HOST and PORT`
  }

  if (config.databaseUrl.startsWith('postgres')) {
    const { host, database, user } = databaseTarget(config.databaseUrl)
    switch (e.code) {
      case 'ECONNREFUSED':
        return `cannot connect to PostgreSQL at ${host} (connection refused): is it running? Check DATABASE_URL`
      case 'ENOTFOUND':
      case 'EAI_AGAIN':
        return `cannot resolve the PostgreSQL host in DATABASE_URL (${host})`
      case 'ETIMEDOUT':
        return `PostgreSQL at ${host} did not answer in time; check DATABASE_URL and the network`
      case '3D000':
        return `the PostgreSQL database "${database}" does not exist on ${host}; create it (createdb ${database}) or change DATABASE_URL`
      case '28000':
      case '28P01':
        return `PostgreSQL at ${host} refused the role "${user}" (${e.message}); check the user and password in DATABASE_URL`
      case '42501':
        return `the PostgreSQL role "${user}" may not create the tables in "${database}" (${e.message}); grant it or change DATABASE_URL`
    }
  }
  if (config.databaseUrl.startsWith('sqlite:')) {
    const path = config.databaseUrl.slice('sqlite:'.length)
    if (['EACCES', 'EROFS', 'EPERM', 'ENOTDIR', 'SQLITE_CANTOPEN', 'SQLITE_READONLY', 'SQLITE_PERM'].includes(e.code ?? '')) {
      return `cannot open the SQLite database at ${path} (${e.code}); set DATABASE_URL to a writable path, e.g. sqlite:./data/tandem.db`
    }
  }
  return `could not start: ${e.message || String(error)}${e.code ? ` (${e.code})` : ''}`
}

/**
 * A SQLite file's folder is created at start-up when missing, but only that one folder: a path whose folder's
 * parent is missing too is most likely a typing mistake (`sqlite:/nonexistent/dir/x.db`), refused here in one
 * line naming it rather than created. null when the path is fine (or not SQLite, or in memory).
 */
export function sqliteFolderProblem(databaseUrl: string): string | null {
  if (!databaseUrl.startsWith('sqlite:')) return null
  const path = databaseUrl.slice('sqlite:'.length)
  if (path === ':memory:') return null
  const folder = dirname(resolve(path))
  if (existsSync(folder)) return null
  const parent = dirname(folder)
  if (existsSync(parent)) return null
  return `cannot create the SQLite database at ${path}: the folder ${parent} does not exist (Tandem creates only the database's own folder, ${folder}); create it or set DATABASE_URL, e.g. sqlite:./data/tandem.db`
}

/** Node 22.14 is the first with Node-API 10, which better-sqlite3 13 needs (on older Nodes it crashes on load). */
export function nodeVersionProblem(version: string = process.versions.node): string | null {
  const [major = 0, minor = 0] = version.split('.').map(Number)
  if (major > 22 || (major === 22 && minor >= 14)) return null
  return `Node ${version} is too old: Tandem needs Node 22.14 or later (24 is the current LTS); see "Node versions" in README.md`
}
