// What `npm start` tells a person at a terminal once the server listens: where the console and the API docs
// are, which database it uses and whether a key is needed. Elsewhere (a pipe, a service manager) the same facts
// are fields of the JSON "Tandem listening on" log line.
import type { Config } from './config.js'

/** The database in words, never with its password. */
export function describeDatabase(databaseUrl: string): string {
  if (databaseUrl === 'sqlite::memory:') return 'SQLite in memory (forgotten when the server stops)'
  if (databaseUrl.startsWith('sqlite:')) return `SQLite at ${databaseUrl.slice('sqlite:'.length)}`
  const url = new URL(databaseUrl)
  return `PostgreSQL at ${url.hostname || 'localhost'}:${url.port || 5432}${url.pathname}`
}

export function describeAuth(config: Config): string {
  return config.auth === 'local'
    ? 'local (no key needed from this machine)'
    : 'required (send Authorization: Bearer <key>; make one with npm run cli -- keys create --name <name>)'
}

/** `url` is what listen() answered, e.g. http://127.0.0.1:3000. */
export function startBanner(url: string, config: Config): string {
  const base = url.replace(/\/+$/, '')
  return [
    `Tandem is listening on ${base}`,
    `  Console: ${base}/`,
    `  API docs: ${base}/docs`,
    `  Database: ${describeDatabase(config.databaseUrl)}`,
    `  Auth: ${describeAuth(config)}`,
    '  Stop with Ctrl+C; npm start -- --help lists the settings.',
  ].join('\n')
}
