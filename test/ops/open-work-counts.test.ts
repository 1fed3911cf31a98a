// What /metrics reads from the database at every scrape — the tasks waiting and the waits open now — and what a
// start-up reads to re-arm the decision clocks take an index of the open rows only (migration 0142), never the whole
// table: on a million runs the old counts made a scrape take 1.3 s on SQLite (the one connection held all along)
// and 0.5 s on PostgreSQL (npm run bench:metrics; docs/performance.md). A query plan is the behaviour checked here, on
// both databases: time is a benchmark's to show.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { sql, type RawBuilder } from 'kysely'
import { build, dialects } from '../helpers.js'
import { TASKS_WAITING } from '../../src/runs/metrics.js'
import { WAITING_NOW } from '../../src/insights/metrics.js'
import { waitingRunsAfter } from '../../src/waits/clock.js'

const COUNTS: Array<[string, RawBuilder<unknown>, string]> = [
  ['tandem_tasks_waiting', TASKS_WAITING, 'run_tasks_open'],
  ['tandem_waiting{kind="decision"}', WAITING_NOW.decision, 'runs_waiting'],
  ['tandem_waiting{kind="tool_approval"}', WAITING_NOW.tool_approval, 'tool_calls_awaiting_approval'],
  ['tandem_waiting{kind="question"}', WAITING_NOW.question, 'tool_calls_asking'],
]

for (const dialect of dialects()) {
  describe(`what reads the open work takes an index of the open rows only (${dialect})`, () => {
    let app: FastifyInstance
    before(async () => {
      app = await build(dialect)
    })
    after(() => app.close())

    /** The plan of `query` as text. On PostgreSQL with sequential scans priced out: an index that can serve the query is then taken, whatever the table's size. */
    async function plan(query: RawBuilder<unknown>): Promise<string> {
      const { db } = app.database
      const text = query.compile(db).sql
      if (dialect === 'sqlite') {
        const { rows } = await sql.raw<{ detail: string }>(`explain query plan ${text}`).execute(db)
        return rows.map((row) => row.detail).join('; ')
      }
      return db.transaction().execute(async (trx) => {
        await sql`set local enable_seqscan = off`.execute(trx)
        const { rows } = await sql.raw<{ 'QUERY PLAN': string }>(`explain ${text}`).execute(trx)
        return rows.map((row) => row['QUERY PLAN']).join('; ')
      })
    }

    for (const [series, query, index] of COUNTS) {
      it(`${series} through ${index}, which holds only the rows it counts`, async () => {
        assert.match(await plan(query), new RegExp(`\\b${index}\\b`))
        const definition = dialect === 'sqlite'
          ? (await sql<{ sql: string }>`select sql from sqlite_master where type = 'index' and name = ${index}`.execute(app.database.db)).rows[0]?.sql
          : (await sql<{ sql: string }>`select indexdef as sql from pg_indexes where indexname = ${index} and schemaname = current_schema()`.execute(app.database.db)).rows[0]?.sql
        assert.match(definition ?? '', /\bwhere\b/i, `${index} is a partial index`)
      })
    }

    it('a start-up re-arms the decision clocks of the waiting runs through runs_waiting', async () => {
      // Its parameters written in (an id and a number), so that both databases can explain it as it runs.
      const { sql: text, parameters } = waitingRunsAfter(app.database.db, '').compile()
      assert.match(text, /"status" = 'waiting'/, 'the status is in the SQL, where the partial index can match it')
      const literal = (value: unknown) => (typeof value === 'number' ? String(value) : `'${String(value)}'`)
      const query = sql.raw(parameters.reduce<string>((so, value, i) => so.replace(dialect === 'sqlite' ? '?' : `$${i + 1}`, literal(value)), text))
      assert.match(await plan(query), /\bruns_waiting\b/)
    })

    it('the open tasks index replaced the index of every task ever made', async () => {
      const names = dialect === 'sqlite'
        ? (await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'run_tasks'`.execute(app.database.db)).rows.map((row) => row.name)
        : (await sql<{ name: string }>`select indexname as name from pg_indexes where tablename = 'run_tasks' and schemaname = current_schema()`.execute(app.database.db)).rows.map((row) => row.name)
      assert.ok(names.includes('run_tasks_open'))
      assert.ok(!names.includes('run_tasks_claim'))
    })
  })
}
