// `npm run bench`: the service (production build, SQLite in a temporary file) against the floor
// (bench/floor.mjs) on the core operations, then one vs two service instances on PostgreSQL.
// Servers are pinned to core 0 and the load generator (this process) to core 1; every measurement is
// preceded by a warm-up; rounds alternate the two servers; medians are reported. Results: table + JSON.
// Settings: BENCH_SECONDS (per measurement, default 5), BENCH_ROUNDS (default 3), BENCH_POSTGRES_URL,
// BENCH_ONLY (run the scenarios whose name starts with it), BENCH_SKIP_POSTGRES=1, BENCH_CEILINGS=1 (two more
// targets beside the floor: the floor with the service's response headers, and that behind bare Fastify; see
// bench/floor.mjs: what the framework and the headers cost before any of the service's own work).
import { spawnSync, type ChildProcess } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import pg from 'pg'
import { AGENT, call, CONNECTIONS, CORE_SCENARIOS, DRAFT_SCENARIO, EDIT, hasTaskset, measure, median, pinToCoreOne, PROMPT, scratch, seed, start as startServer, type Sample, type Scenario, type Seed } from './common.js'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const WARMUP_SECONDS = Math.max(1, Math.round(SECONDS / 2))
const ONLY = process.env.BENCH_ONLY
const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const CEILINGS = process.env.BENCH_CEILINGS === '1'

pinToCoreOne()
const { work, children } = scratch('tandem-bench')
const start = (name: string, core: number | null, args: string[], env: Record<string, string>) => startServer(name, core, args, env, children)

const examples = JSON.parse(readFileSync(new URL('../test/cycles/fixtures/examples.json', import.meta.url), 'utf8'))

interface Target {
  name: string
  url: string
}

/** CPU seconds used so far by some processes (from /proc). */
function cpuSeconds(pids: number[]): number {
  let ticks = 0
  for (const pid of pids) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
      ticks += Number(fields[11]) + Number(fields[12])
    } catch {
      // the process has gone
    }
  }
  return ticks / 100
}

const postgresPids = () => (spawnSync('pgrep', ['-x', 'postgres'], { encoding: 'utf8' }).stdout || '').split('\n').filter(Boolean).map(Number)

/** Runs `work` and says how the machine's cores were spent meanwhile, in % of one core each. */
async function withCpuShares<T>(instances: ChildProcess[], work: () => Promise<T>): Promise<{ result: T; cpu: string }> {
  const pg = postgresPids()
  const own = instances.map((c) => c.pid as number)
  const start = { service: cpuSeconds(own), postgres: cpuSeconds(pg), load: process.cpuUsage(), at: Date.now() }
  const result = await work()
  const seconds = (Date.now() - start.at) / 1000
  const load = process.cpuUsage(start.load)
  const share = (used: number) => `${Math.round((100 * used) / seconds)}%`
  return {
    result,
    cpu: `service ${share(cpuSeconds(own) - start.service)}, PostgreSQL ${share(cpuSeconds(pg) - start.postgres)}, load generator ${share((load.user + load.system) / 1e6)} (of 200%)`,
  }
}

function rssMb(child: ChildProcess): number {
  const status = readFileSync(`/proc/${child.pid}/status`, 'utf8')
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024)
}

async function sqliteComparison() {
  console.log(`building…`)
  const build = spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' })
  if (build.status !== 0) throw new Error('build failed')
  const service = await start('service', 0, ['dist/main.js'], {
    NODE_ENV: 'production',
    DATABASE_URL: `sqlite:${join(work, 'service.db')}`,
    TANDEM_AUTH: 'local',
    LOG_LEVEL: 'info',
  })
  const serviceSeed = await seed(service.url)
  for (const agent of examples.agents) await call(service.url, 'POST', '/api/agents', agent)
  const draftReply = await call(service.url, 'POST', `/api/cycles/streams/${serviceSeed.streamId}/cycles/draft`, { mode: 'generate', prompt: PROMPT })
  writeFileSync(join(work, 'draft.json'), JSON.stringify(draftReply))
  const floor = await start('floor', 0, ['bench/floor.mjs'], { DATABASE_FILE: join(work, 'floor.db'), DRAFT_REPLY: join(work, 'draft.json') })
  const floorSeed = await seed(floor.url)
  const seeds: Record<string, Seed> = { service: serviceSeed, floor: floorSeed }
  const targets: Target[] = [{ name: 'service', url: service.url }, { name: 'floor', url: floor.url }]
  const others = [floor]
  // The ceilings: the floor with the service's response headers, and the same behind bare Fastify.
  if (CEILINGS) {
    for (const [name, env] of [['floor+headers', { FLOOR_HEADERS: '1' }], ['fastify+headers', { FLOOR_HEADERS: '1', FLOOR_FRAMEWORK: 'fastify' }]] as const) {
      const ceiling = await start(name, 0, ['bench/floor.mjs'], { DATABASE_FILE: join(work, `${name}.db`), DRAFT_REPLY: join(work, 'draft.json'), ...env })
      seeds[name] = await seed(ceiling.url)
      targets.push({ name, url: ceiling.url })
      others.push(ceiling)
    }
  }
  const pathFor = (scenario: Scenario, target: Target) => scenario.path(seeds[target.name]!)

  const scenarios: Scenario[] = [
    // Drafting first: it assigns over the workspace's agents, which "create agent" then multiplies.
    DRAFT_SCENARIO,
    ...CORE_SCENARIOS,
  ]
  const rows = []
  for (const scenario of scenarios.filter((s) => !ONLY || s.name.startsWith(ONLY))) {
    const samples: Record<string, Sample[]> = Object.fromEntries(targets.map((t) => [t.name, []]))
    for (const target of targets) await measure(target.url, scenario, pathFor(scenario, target), WARMUP_SECONDS)
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? targets : [...targets].reverse()
      for (const target of order) samples[target.name]!.push(await measure(target.url, scenario, pathFor(scenario, target), SECONDS))
    }
    const summary = (name: string) => ({
      rps: Math.round(median(samples[name]!.map((s) => s.rps))),
      p50: median(samples[name]!.map((s) => s.p50)),
      p99: median(samples[name]!.map((s) => s.p99)),
      errors: samples[name]!.reduce((sum, s) => sum + s.errors, 0),
    })
    const s = summary('service')
    const f = summary('floor')
    const row = {
      scenario: scenario.name,
      'service req/s': s.rps,
      'service p50 ms': s.p50,
      'service p99 ms': s.p99,
      'floor req/s': f.rps,
      'floor p50 ms': f.p50,
      'floor p99 ms': f.p99,
      'service/floor': +(s.rps / f.rps).toFixed(2),
      ...Object.fromEntries(targets.slice(2).flatMap((t) => [[`${t.name} req/s`, summary(t.name).rps], [`${t.name}/floor`, +(summary(t.name).rps / f.rps).toFixed(2)]])),
      errors: targets.reduce((sum, t) => sum + summary(t.name).errors, 0),
    }
    rows.push(row)
    console.log(JSON.stringify(row))
  }
  const rss = rssMb(service.child)
  service.child.kill('SIGTERM')
  for (const other of others) other.child.kill('SIGTERM')
  return { rows, serviceRssMb: rss }
}

const cpuNotes: string[] = []

async function postgresScaling() {
  const admin = new pg.Client({ connectionString: POSTGRES_URL })
  try {
    await admin.connect()
  } catch {
    console.log(`PostgreSQL not reachable at ${POSTGRES_URL}: scale-out part skipped`)
    return null
  }
  await admin.query('drop database if exists tandem_bench')
  await admin.query('create database tandem_bench')
  await admin.end()
  const url = new URL(POSTGRES_URL)
  url.pathname = '/tandem_bench'
  // Instances on one PostgreSQL database share the vault key (the service refuses to start without one).
  const env = { NODE_ENV: 'production', DATABASE_URL: url.toString(), TANDEM_AUTH: 'local', LOG_LEVEL: 'info', TANDEM_SECRET_KEY: randomBytes(32).toString('base64') }
  const first = await start('instance 1', 0, ['dist/main.js'], env)
  const seeded = await seed(first.url)
  // Edits spread over 32 messages: 32 connections on one row would measure a lock queue, not the service.
  const messages: string[] = []
  for (let i = 0; i < 32; i++) messages.push(((await call(first.url, 'POST', `/api/chat/streams/${seeded.streamId}/messages`, EDIT)) as { id: string }).id)
  const scenarios: Scenario[] = [
    { name: 'create agent', method: 'POST', path: () => '/api/agents', body: AGENT },
    { name: 'get agent', method: 'GET', path: () => `/api/agents/${seeded.agentId}` },
    { name: 'edit message (32 messages)', method: 'PATCH', path: () => messages.map((id) => `/api/chat/messages/${id}`), body: EDIT },
  ]
  const one: Record<string, { sample: Sample; cpu: string }> = {}
  for (const scenario of scenarios) {
    await measure(first.url, scenario, scenario.path(seeded), WARMUP_SECONDS)
    const { result, cpu } = await withCpuShares([first.child], () => measure(first.url, scenario, scenario.path(seeded), SECONDS))
    one[scenario.name] = { sample: result, cpu }
  }
  const second = await start('instance 2', 1, ['dist/main.js'], env)
  const rows = []
  for (const scenario of scenarios) {
    const path = scenario.path(seeded)
    await Promise.all([first, second].map((i) => measure(i.url, scenario, path, WARMUP_SECONDS, CONNECTIONS / 2)))
    const { result: both, cpu } = await withCpuShares([first.child, second.child], () => Promise.all([first, second].map((i) => measure(i.url, scenario, path, SECONDS, CONNECTIONS / 2))))
    const single = one[scenario.name]!.sample
    const total = both.reduce((sum, s) => sum + s.rps, 0)
    rows.push({
      scenario: scenario.name,
      '1 instance req/s': Math.round(single.rps),
      '1 instance p99 ms': single.p99,
      '2 instances req/s': Math.round(total),
      '2 instances p99 ms': Math.max(...both.map((s) => s.p99)),
      'scale-out': +(total / single.rps).toFixed(2),
      errors: single.errors + both.reduce((sum, s) => sum + s.errors, 0),
    })
    cpuNotes.push(`${scenario.name}: 1 instance — ${one[scenario.name]!.cpu}; 2 instances — ${cpu}`)
  }
  first.child.kill('SIGTERM')
  second.child.kill('SIGTERM')
  return rows
}

const sqlite = await sqliteComparison()
console.log(`\nSQLite, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s, medians (servers on core 0, load on core 1${hasTaskset ? '' : ' — taskset missing: not pinned'}):`)
console.table(sqlite.rows)
console.log(`service resident memory after the run: ${sqlite.serviceRssMb} MB`)
const postgres = process.env.BENCH_SKIP_POSTGRES ? null : await postgresScaling()
if (postgres) {
  console.log(`\nPostgreSQL, ${CONNECTIONS} connections in all (split evenly over the instances), ${SECONDS} s:`)
  console.table(postgres)
  console.log('CPU while measuring:')
  for (const note of cpuNotes) console.log(`  ${note}`)
}
const results = { date: new Date().toISOString(), node: process.version, cores: 2, seconds: SECONDS, rounds: ROUNDS, connections: CONNECTIONS, sqlite, postgres, postgresCpu: cpuNotes }
mkdirSync('bench/results', { recursive: true })
writeFileSync('bench/results/latest.json', `${JSON.stringify(results, null, 2)}\n`)
console.log('\nwritten to bench/results/latest.json')
process.exit(0)
