// `npm run bench:scale`: does the cost of the core operations stay flat as the data grows? For each database
// (SQLite in a temporary file; PostgreSQL in a database of its own, created and dropped) and each size N, the
// service starts on an empty database and `npm run bench`'s workspace is seeded (a stream, a message, 72 agents),
// then N agents (in N / 1,000 other workspaces, each with its search entry) and N messages (in N / 1,000 other
// streams of the workspace, each with its stream event) are written straight into the database, and the service
// is started again on it: create agent, get agent, edit message and draft are measured as `npm run bench` does
// (32 connections from core 1, the service on core 0), one after the other.
// The services of every size run side by side and the sizes alternate, BENCH_ROUNDS rounds (medians printed):
// this machine's speed drifts within minutes. Prints req/s and p99 per size, and each size's throughput as a
// share of the smallest size's.
// Settings: BENCH_SCALE_SIZES (default 10000,100000,1000000), BENCH_SECONDS (per measurement, default 5),
// BENCH_POSTGRES_URL (an administrator's URL, default postgres://postgres@127.0.0.1:5432/postgres),
// BENCH_ROUNDS (default 3), BENCH_SKIP_POSTGRES=1, BENCH_SKIP_SQLITE=1.
import { readFileSync } from 'node:fs'
import Database from 'better-sqlite3'
import pg from 'pg'
import { benchDatabase, call, CORE_SCENARIOS, DRAFT_SCENARIO, measure, pinToCoreOne, scratch, seed, start, type Sample, type Scenario, type Seed, stop } from './common.js'

const SIZES = (process.env.BENCH_SCALE_SIZES ?? '10000,100000,1000000').split(',').map(Number)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const PER_GROUP = 1000

pinToCoreOne()
const { work, children } = scratch('tandem-scale')
const examples = JSON.parse(readFileSync(new URL('../test/cycles/fixtures/examples.json', import.meta.url), 'utf8')) as { agents: unknown[] }
// Drafting first, as in `npm run bench`: it drafts over the workspace's agents, which create agent then multiplies.
const SCENARIOS: Scenario[] = [DRAFT_SCENARIO, ...CORE_SCENARIOS.filter((s) => !s.name.startsWith('list'))]

// Ids of the bulk rows: valid UUIDs (version 7 layout), apart from the service's by their first group.
const SQLITE_ID = (kind: number, column: string) => `printf('%08x-0000-7000-8000-%012x', ${kind}, ${column})`
const PG_ID = (kind: number, column: string) => `lpad(to_hex(${kind}), 8, '0') || '-0000-7000-8000-' || lpad(to_hex(${column}), 12, '0')`
const CONTENT = JSON.stringify({ blocks: [{ type: 'rich_text', elements: [{ type: 'paragraph', children: [{ type: 'text', text: 'A stored message of the scale bench.' }] }] }] })
const CREATED = '2026-01-01T00:00:00.000Z'
// Varied words, so that the full-text index holds many terms, some of them the prompt's.
const VOCABULARY = ['research', 'translate', 'summarise', 'review', 'schedule', 'invoice', 'contract', 'support', 'ticket', 'report', 'chart', 'meeting']

function seedSqlite(file: string, streamId: string, n: number): void {
  const db = new Database(file)
  const { workspace_id: workspaceId } = db.prepare('select workspace_id from streams where id = ?').get(streamId) as { workspace_id: string }
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = OFF')
  const groups = Math.ceil(n / PER_GROUP)
  const word = (expr: string) => `(select value from json_each('${JSON.stringify(VOCABULARY)}') where key = (${expr}) % ${VOCABULARY.length})`
  db.exec('begin')
  db.exec(`
    with recursive g(i) as (select 0 union all select i + 1 from g where i + 1 < ${groups})
    insert into workspaces (id, name, created_at) select ${SQLITE_ID(1, 'i')}, 'scale ' || i, '${CREATED}' from g;
    with recursive g(i) as (select 0 union all select i + 1 from g where i + 1 < ${groups})
    insert into streams (id, workspace_id, name, description, created_at) select ${SQLITE_ID(2, 'i')}, '${workspaceId}', 'scale ' || i, null, '${CREATED}' from g;
    with recursive g(i) as (select 0 union all select i + 1 from g where i + 1 < ${n})
    insert into agents (id, workspace_id, provider_type, auth_mode, name, avatar_asset_id, credential_id, config, instructions, template_id, streaming, tools, endpoint_url, created_at, updated_at, version)
    select ${SQLITE_ID(3, 'i')}, ${SQLITE_ID(1, `i / ${PER_GROUP}`)}, 'custom_webhook', null, 'Agent ' || i, null, null, '{}',
      'Handle the ' || ${word('i')} || ' work of area ' || (i % 997) || ', then ' || ${word('i / 7')} || ' it and ' || ${word('i / 13')} || ' the outcome for team ' || (i % 89) || '.',
      null, 0, '["tool_' || (i % 97) || '"]', null, '${CREATED}', '${CREATED}', 1 from g;
    insert into agent_search (agent_id, workspace_id, name, tools, instructions, name_only)
    select id, workspace_id, name, replace(replace(replace(replace(tools, '_', ' '), '[', ''), ']', ''), '"', ''), instructions, '' from agents where id like '00000003-%' order by id;
    insert into agent_search_keys (agent_id, search_rowid, workspace_id, name_start, name_words)
    select agent_id, rowid, workspace_id, lower(name), lower(name) from agent_search where agent_id like '00000003-%';
    with recursive g(i) as (select 0 union all select i + 1 from g where i + 1 < ${n})
    insert into messages (id, workspace_id, stream_id, author_id, content, text, revision, created_at)
    select ${SQLITE_ID(4, 'i')}, '${workspaceId}', ${SQLITE_ID(2, `i / ${PER_GROUP}`)}, 'scale', '${CONTENT}', 'A stored message of the scale bench.', 1, '${CREATED}' from g;
    with recursive g(i) as (select 0 union all select i + 1 from g where i + 1 < ${n})
    insert into stream_events (stream_id, id, workspace_id, type, data, created_at)
    select ${SQLITE_ID(2, `i / ${PER_GROUP}`)}, i % ${PER_GROUP} + 1, '${workspaceId}', 'message.created', '{"id":"' || ${SQLITE_ID(4, 'i')} || '"}', '${CREATED}' from g;
    insert into stream_event_heads (stream_id, workspace_id, last_id, purged_through)
    select stream_id, workspace_id, max(id), 0 from stream_events where stream_id like '00000002-%' group by stream_id;
  `)
  db.exec('commit')
  db.close()
}

async function seedPostgres(url: string, streamId: string, n: number): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  const workspaceId = ((await client.query('select workspace_id from streams where id = $1', [streamId])).rows[0] as { workspace_id: string }).workspace_id
  const groups = Math.ceil(n / PER_GROUP)
  const word = (expr: string) => `(array[${VOCABULARY.map((w) => `'${w}'`).join(',')}])[(${expr}) % ${VOCABULARY.length} + 1]`
  await client.query('begin')
  await client.query(`insert into workspaces (id, name, created_at) select ${PG_ID(1, 'i')}, 'scale ' || i, '${CREATED}' from generate_series(0, ${groups - 1}) i`)
  await client.query(`insert into streams (id, workspace_id, name, description, created_at) select ${PG_ID(2, 'i')}, '${workspaceId}', 'scale ' || i, null, '${CREATED}' from generate_series(0, ${groups - 1}) i`)
  await client.query(`
    insert into agents (id, workspace_id, provider_type, auth_mode, name, avatar_asset_id, credential_id, config, instructions, template_id, streaming, tools, endpoint_url, created_at, updated_at, version)
    select ${PG_ID(3, 'i')}, ${PG_ID(1, `i / ${PER_GROUP}`)}, 'custom_webhook', null, 'Agent ' || i, null, null, '{}',
      'Handle the ' || ${word('i')} || ' work of area ' || (i % 997) || ', then ' || ${word('i / 7')} || ' it and ' || ${word('i / 13')} || ' the outcome for team ' || (i % 89) || '.',
      null, 0, '["tool_' || (i % 97) || '"]', null, '${CREATED}', '${CREATED}', 1 from generate_series(0, ${n - 1}) i`)
  await client.query(`
    insert into agent_search (agent_id, workspace_id, document, name_start, name_words)
    select id, workspace_id,
      setweight(to_tsvector('english', name), 'A') || setweight(to_tsvector('english', translate(tools, '_[]",', '     ')), 'B') || setweight(to_tsvector('english', coalesce(instructions, '')), 'C'),
      lower(name), lower(name)
    from agents where id like '00000003-%'`)
  await client.query(`
    insert into messages (id, workspace_id, stream_id, author_id, content, text, revision, created_at)
    select ${PG_ID(4, 'i')}, '${workspaceId}', ${PG_ID(2, `i / ${PER_GROUP}`)}, 'scale', '${CONTENT}', 'A stored message of the scale bench.', 1, '${CREATED}' from generate_series(0, ${n - 1}) i`)
  await client.query(`
    insert into stream_events (stream_id, id, workspace_id, type, data, created_at)
    select ${PG_ID(2, `i / ${PER_GROUP}`)}, i % ${PER_GROUP} + 1, '${workspaceId}', 'message.created', '{"id":"' || ${PG_ID(4, 'i')} || '"}', '${CREATED}' from generate_series(0, ${n - 1}) i`)
  await client.query(`
    insert into stream_event_heads (stream_id, workspace_id, last_id, purged_through)
    select stream_id, workspace_id, max(id), 0 from stream_events where stream_id like '00000002-%' group by stream_id, workspace_id`)
  await client.query('commit')
  await client.query('analyze')
  await client.end()
}

interface Prepared {
  size: number
  env: Record<string, string>
  seeded: Seed
  seedSeconds: number
  drop: () => Promise<void>
}

/** A database of `size` stored agents and messages, seeded, with the service stopped. */
async function prepare(database: 'sqlite' | 'postgres', size: number): Promise<Prepared> {
  const { env: databaseEnv, location, drop } = await benchDatabase(database, database === 'sqlite' ? `scale-${size}` : `tandem_scale_${process.pid}_${size}`, work, POSTGRES_URL)
  const seedBulk = database === 'sqlite' ? async (streamId: string) => seedSqlite(location, streamId, size) : (streamId: string) => seedPostgres(location, streamId, size)
  const env = { ...databaseEnv, NODE_ENV: 'production', TANDEM_AUTH: 'local', LOG_LEVEL: 'info' }
  const first = await start('service', 0, ['dist/main.js'], env, children)
  const seeded: Seed = await seed(first.url)
  for (const agent of examples.agents) await call(first.url, 'POST', '/api/agents', agent)
  await stop(first)
  const began = performance.now()
  await seedBulk(seeded.streamId)
  return { size, env, seeded, seedSeconds: (performance.now() - began) / 1000, drop }
}

interface Row {
  database: string
  size: number
  seedSeconds: number
  samples: Record<string, Sample>
}

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const median = (values: Sample[], key: 'rps' | 'p99') => [...values.map((v) => v[key])].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number

/** Every size of one database at once: the services run side by side and the sizes alternate, round after round (this machine's speed drifts). */
async function compare(database: 'sqlite' | 'postgres'): Promise<Row[]> {
  const prepared: Prepared[] = []
  try {
    for (const size of SIZES) {
      prepared.push(await prepare(database, size))
      console.log(`${database}: ${size.toLocaleString('en')} agents and messages stored in ${prepared.at(-1)!.seedSeconds.toFixed(0)} s`)
    }
    const services = []
    for (const p of prepared) services.push(await start('service', 0, ['dist/main.js'], p.env, children))
    const samples = prepared.map(() => ({}) as Record<string, Sample[]>)
    for (const scenario of SCENARIOS) {
      for (const [i, p] of prepared.entries()) await measure(services[i]!.url, scenario, scenario.path(p.seeded), Math.max(1, Math.round(SECONDS / 2)))
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 === 0 ? [...prepared.keys()] : [...prepared.keys()].reverse()
        for (const i of order) (samples[i]![scenario.name] ??= []).push(await measure(services[i]!.url, scenario, scenario.path(prepared[i]!.seeded), SECONDS))
      }
    }
    for (const service of services) await stop(service)
    return prepared.map((p, i) => ({
      database,
      size: p.size,
      seedSeconds: p.seedSeconds,
      samples: Object.fromEntries(Object.entries(samples[i]!).map(([name, list]) => [name, { rps: median(list, 'rps'), p99: median(list, 'p99'), p50: 0, errors: list.reduce((sum, s) => sum + s.errors, 0) }])),
    }))
  } finally {
    for (const p of prepared) await p.drop()
  }
}

const rows: Row[] = []
for (const database of ['sqlite', 'postgres'] as const) {
  if (database === 'sqlite' && process.env.BENCH_SKIP_SQLITE) continue
  if (database === 'postgres' && process.env.BENCH_SKIP_POSTGRES) continue
  for (const row of await compare(database)) {
    rows.push(row)
    console.log(`${database} ${row.size.toLocaleString('en')} stored: ` +
      Object.entries(row.samples).map(([name, s]) => `${name} ${Math.round(s.rps)} req/s p99 ${s.p99} ms${s.errors ? ` (${s.errors} errors)` : ''}`).join('; '))
  }
}

console.log(`\n${ROUNDS} rounds of ${SECONDS} s, medians; × smallest: the size's throughput over the smallest size's, same database`)
console.log('| database | stored | ' + SCENARIOS.map((s) => `${s.name} req/s (p99 ms, × smallest)`).join(' | ') + ' |')
console.log('|---|---|' + SCENARIOS.map(() => '---|').join(''))
for (const row of rows) {
  const base = rows.find((r) => r.database === row.database)!
  console.log(`| ${row.database} | ${row.size.toLocaleString('en')} | ` + SCENARIOS.map((s) => {
    const sample = row.samples[s.name]!
    return `${Math.round(sample.rps)} (${sample.p99}, ${(sample.rps / base.samples[s.name]!.rps).toFixed(2)}×)`
  }).join(' | ') + ' |')
}
