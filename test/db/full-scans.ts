// A watch on an app's SQLite statements, for the tests of flows over tables that grow with use: every statement the
// app prepares from now on is explained once (EXPLAIN QUERY PLAN; SQLite plans the same whatever a table holds,
// having no statistics), and each one that reads the whole of such a table is kept — a plain scan, or a scan of an
// index that holds every row. A scan of a partial index (the open rows only) is what such an index is for.
import { it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import type Database from 'better-sqlite3'
import { sqliteDriverOf } from '../../src/db/sqlite-driver.js'

/** Tables whose rows pile up as the service is used: a read of all of them costs more every day. */
const GROWING = ['runs', 'run_tasks', 'tool_calls', 'messages', 'message_revisions', 'stream_events', 'webhook_deliveries', 'a2a_tasks', 'a2a_remote_tasks', 'insight_phase_runs', 'insight_waits']

export interface FullScans {
  /** The statements that read a whole growing table, each with the plan's offending lines. */
  found(): Array<{ sql: string; scans: string[] }>
}

/** Watches the app's statements (SQLite; on PostgreSQL plans depend on the tables' statistics: null). */
export function watchFullScans(app: FastifyInstance): FullScans | null {
  const driver = sqliteDriverOf(app.database.db)
  if (!driver) return null
  const raw = driver.raw
  const partial = new Set((raw.prepare("select name from sqlite_master where type = 'index' and sql like '% where %'").all() as Array<{ name: string }>).map((row) => row.name))
  const found: Array<{ sql: string; scans: string[] }> = []
  const seen = new Set<string>()
  const prepare = raw.prepare.bind(raw)
  raw.prepare = ((source: string) => {
    const statement = prepare(source)
    if (!seen.has(source) && /^\s*(select|update|delete|insert|with)\b/i.test(source)) {
      seen.add(source)
      const parameters = Array<null>((source.match(/\?/g) ?? []).length).fill(null)
      const plan = (prepare(`explain query plan ${source}`).all(...parameters) as Array<{ detail: string }>).map((row) => row.detail)
      const scans = plan.filter((line) => {
        const match = /^SCAN (\w+)(?: USING (?:COVERING )?INDEX (\w+))?/.exec(line)
        return match !== null && GROWING.includes(match[1] as string) && !(match[2] && partial.has(match[2]))
      })
      if (scans.length > 0) found.push({ sql: source.replace(/\s+/g, ' '), scans })
    }
    return statement
  }) as Database.Database['prepare']
  return { found: () => found }
}

/** A file's last test, after every flow it watched: none of their statements read a whole growing table. */
export function itReadsNoWholeGrowingTable(scans: () => FullScans | null): void {
  it('no statement of these flows reads a whole table that grows with use', () => {
    assert.deepEqual(scans()?.found(), [])
  })
}
