// `npm run bench:metrics`: does a scrape of /metrics stay cheap as the runs pile up? For each database (SQLite in a
// temporary file; PostgreSQL in a database of its own, created and dropped) and each size N, the service starts on
// an empty database and stops, then N finished runs, N tasks and N tool calls are written straight into it (one in a
// thousand of each still waiting: a run awaiting a decision, an open task, a tool call awaiting approval, a question),
// and the service is started again on it. GET /metrics is then timed BENCH_SCRAPES times (after one uncounted
// scrape), and the waiting figures it reports are checked against the seeded counts.
// Settings: BENCH_SCALE_SIZES (default 10000,100000,1000000), BENCH_SCRAPES (default 10), BENCH_POSTGRES_URL (an
// administrator's URL, default postgres://postgres@127.0.0.1:5432/postgres), BENCH_SKIP_POSTGRES=1, BENCH_SKIP_SQLITE=1.
import Database from 'better-sqlite3'
import pg from 'pg'
import { benchDatabase, median, scratch, seed, start, stop } from './common.js'

const SIZES = (process.env.BENCH_SCALE_SIZES ?? '10000,100000,1000000').split(',').map(Number)
const SCRAPES = Number(process.env.BENCH_SCRAPES ?? 10)
const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const WAITING_EVERY = 1000
const CREATED = '2026-01-01T00:00:00.000Z'
// A finished run's document: its size, not its shape, is what a scan of the table pays for.
const DOCUMENT = JSON.stringify({ status: 'succeeded', phases: [{ status: 'succeeded', output: 'An answer of the metrics bench. '.repeat(40) }] })
const WAITING_DOCUMENT = JSON.stringify({ status: 'waiting', phases: [{ status: 'awaiting_decision', output: 'An answer of the metrics bench. '.repeat(40) }] })

const { work, children } = scratch('tandem-metrics-scale')

/** The rows, as one SELECT over `i` (0 … n - 1) per table; `id(kind, expr)` makes a UUID of the dialect. */
function bulkInserts(workspaceId: string, streamId: string, id: (kind: number, expr: string) => string, from: string): string[] {
  const waiting = `i % ${WAITING_EVERY} = 0`
  return [
    `insert into runs (id, workspace_id, stream_id, status, document, created_at)
     select ${id(5, 'i')}, '${workspaceId}', '${streamId}', case when ${waiting} then 'waiting' else 'succeeded' end,
       case when ${waiting} then '${WAITING_DOCUMENT}' else '${DOCUMENT}' end, '${CREATED}' from ${from}`,
    `insert into run_tasks (id, workspace_id, run_id, phase_run_id, agent_id, attempt, delivery, state, created_at)
     select ${id(6, 'i')}, '${workspaceId}', ${id(5, 'i')}, ${id(7, 'i')}, ${id(8, 'i % 50')}, 1, 'push',
       case when ${waiting} then 'open' else 'answered' end, '${CREATED}' from ${from}`,
    `insert into tool_calls (id, workspace_id, run_id, phase_run_id, task_id, attempt, step, position, model_call_id, name, input, status, started_at)
     select ${id(9, 'i')}, '${workspaceId}', ${id(5, 'i')}, ${id(7, 'i')}, ${id(6, 'i')}, 1, 1, 0, 'call',
       case when ${waiting} then 'tandem.ask_operator' else 'search' end, '{}',
       case when ${waiting} then 'running' when i % ${WAITING_EVERY} = 1 then 'awaiting_approval' else 'succeeded' end, '${CREATED}' from ${from}`,
  ]
}

const SQLITE_ID = (kind: number, expr: string) => `printf('%08x-0000-7000-8000-%012x', ${kind}, ${expr})`
const PG_ID = (kind: number, expr: string) => `lpad(to_hex(${kind}), 8, '0') || '-0000-7000-8000-' || lpad(to_hex(${expr}), 12, '0')`

function seedSqlite(file: string, streamId: string, n: number): void {
  const db = new Database(file)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = OFF')
  const { workspace_id: workspaceId } = db.prepare('select workspace_id from streams where id = ?').get(streamId) as { workspace_id: string }
  const from = `(with recursive g(i) as (select 0 union all select i + 1 from g where i + 1 < ${n}) select i from g)`
  db.exec('begin')
  for (const statement of bulkInserts(workspaceId, streamId, SQLITE_ID, from)) db.exec(statement)
  db.exec('commit')
  db.close()
}

async function seedPostgres(url: string, streamId: string, n: number): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  const { workspace_id: workspaceId } = (await client.query('select workspace_id from streams where id = $1', [streamId])).rows[0] as { workspace_id: string }
  await client.query('begin')
  for (const statement of bulkInserts(workspaceId, streamId, PG_ID, `generate_series(0, ${n - 1}) i`)) await client.query(statement)
  await client.query('commit')
  await client.query('vacuum analyze runs, run_tasks, tool_calls')
  await client.end()
}

const figure = (text: string, series: string) => Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN)

async function measureSize(database: 'sqlite' | 'postgres', size: number): Promise<string> {
  const { env: databaseEnv, location, drop } = await benchDatabase(database, database === 'sqlite' ? `metrics-${size}` : `tandem_metrics_${process.pid}_${size}`, work, POSTGRES_URL)
  const seedBulk = database === 'sqlite' ? async (streamId: string) => seedSqlite(location, streamId, size) : (streamId: string) => seedPostgres(location, streamId, size)
  const env = { ...databaseEnv, NODE_ENV: 'production', TANDEM_AUTH: 'local', LOG_LEVEL: 'warn', TANDEM_WORKERS: '0' }
  try {
    const first = await start('service', null, ['dist/main.js'], env, children)
    const { streamId } = await seed(first.url)
    await stop(first)
    const began = performance.now()
    await seedBulk(streamId)
    const seedSeconds = (performance.now() - began) / 1000
    const service = await start('service', null, ['dist/main.js'], env, children)
    const scrape = async () => {
      const t = performance.now()
      const res = await fetch(`${service.url}/metrics`)
      const text = await res.text()
      if (res.status !== 200) throw new Error(`GET /metrics: ${res.status}`)
      return { ms: performance.now() - t, text }
    }
    const { text } = await scrape()
    const waiting = Math.ceil(size / WAITING_EVERY)
    const expected: Array<[string, number]> = [
      ['tandem_tasks_waiting', waiting],
      ['tandem_waiting{kind="decision"}', waiting],
      ['tandem_waiting{kind="tool_approval"}', Math.floor((size - 2) / WAITING_EVERY) + 1],
      ['tandem_waiting{kind="question"}', waiting],
    ]
    for (const [series, n] of expected) if (figure(text, series) !== n) throw new Error(`${series}: ${figure(text, series)}, expected ${n}`)
    const times: number[] = []
    for (let i = 0; i < SCRAPES; i++) times.push((await scrape()).ms)
    await stop(service)
    const sorted = [...times].sort((a, b) => a - b)
    return `| ${database} | ${size.toLocaleString('en')} | ${seedSeconds.toFixed(0)} s | ${median(times).toFixed(1)} ms | ${sorted.at(-1)!.toFixed(1)} ms |`
  } finally {
    await drop()
  }
}

const lines: string[] = []
for (const database of ['sqlite', 'postgres'] as const) {
  if (database === 'sqlite' && process.env.BENCH_SKIP_SQLITE) continue
  if (database === 'postgres' && process.env.BENCH_SKIP_POSTGRES) continue
  for (const size of SIZES) {
    const line = await measureSize(database, size)
    console.log(line)
    lines.push(line)
  }
}
console.log(`\nGET /metrics, ${SCRAPES} scrapes after one uncounted; runs, tasks and tool calls stored, one in ${WAITING_EVERY} waiting`)
console.log('| database | stored | seeded in | median scrape | slowest scrape |')
console.log('|---|---|---|---|---|')
for (const line of lines) console.log(line)
