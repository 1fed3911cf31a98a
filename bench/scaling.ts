// `npm run bench:scaling`: what one PostgreSQL server gives several instances (docs/scaling.md). Production build
// (dist/), one fresh database per setting, a local webhook agent that answers every task at once. For each
// setting (instances × streams): BENCH_RUNS one-phase runs started by 32 concurrent clients spread over the
// instances and the streams, after a warm-up of 50; then, from the database's own counters:
//   runs/s            runs ÷ (first start → the last run succeeded, read from the database);
//   commits per run   pg_stat_database.xact_commit of the database (every instance's and graphile-worker's);
//   WAL per run       pg_current_wal_lsn() before and after (the whole server: keep the machine otherwise idle);
//   NOTIFYs per run   notifications received on a LISTEN connection, by channel; and notifying commits (the
//                     commits that took PostgreSQL's global notify lock): a commit's notifications reach the
//                     queue together, so each change of sending backend in the stream of them is one more;
//   PG CPU per run    utime+stime of the database's backends (/proc, read while they live: a lower bound).
// Settings: BENCH_NO_BUILD=1 (use dist/ as it is), BENCH_RUNS (default 1000), BENCH_SETTINGS (default
// "1x1,3x1,3x24": instances × streams), BENCH_POSTGRES_URL (postgres://postgres@127.0.0.1:5432/postgres).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { randomBytes, randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import pg from 'pg'
import { freePort } from './free-port.js'

const RUNS = Number(process.env.BENCH_RUNS ?? 1000)
const SETTINGS = (process.env.BENCH_SETTINGS ?? '1x1,3x1,3x24').split(',').map((s) => s.split('x').map(Number) as [number, number])
const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const CLIENTS = 32
const TICKS = Number(spawnSync('getconf', ['CLK_TCK']).stdout?.toString().trim()) || 100
const SECRET_KEY = randomBytes(32).toString('base64')
const children: ChildProcess[] = []
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL')
})

const agent = createServer((req, res) => {
  req.resume()
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ output: { text: 'done' } })))
})
await new Promise<void>((resolve) => agent.listen(0, '127.0.0.1', resolve))
const endpointUrl = `http://127.0.0.1:${(agent.address() as AddressInfo).port}/hook`

async function startService(databaseUrl: string): Promise<string> {
  const port = await freePort()
  const child = spawn(process.execPath, ['dist/main.js'], {
    env: { ...process.env, PORT: String(port), DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', TANDEM_AUTH: 'local', TANDEM_EGRESS_ALLOW: '127.0.0.0/8', TANDEM_SECRET_KEY: SECRET_KEY },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  children.push(child)
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`${url}/healthz`)).status === 200) return url
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error('the service did not start')
}

async function post(url: string, body: unknown): Promise<{ id: string }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  if (res.status >= 300) throw new Error(`${url} → ${res.status} ${await res.text()}`)
  return (await res.json()) as { id: string }
}

async function runPath(base: string, agentId: string): Promise<string> {
  const streamId = (await post(`${base}/api/streams`, { name: `bench ${randomUUID().slice(0, 8)}` })).id
  const phase = { id: randomUUID(), agentId, goal: 'g', instructions: 'i', autoAdvance: true, phaseName: 'p', operatorPool: [] }
  const cycleId = (await post(`${base}/api/cycles/streams/${streamId}/cycles`, { triggerName: 'bench', description: 'd', phasesTemplate: [phase] })).id
  return `/api/cycles/streams/${streamId}/cycles/${cycleId}/runs`
}

async function startRuns(bases: string[], paths: string[], count: number): Promise<void> {
  let next = 0
  await Promise.all(Array.from({ length: CLIENTS }, async (_, c) => {
    while (next < count) {
      const n = next++
      await post(bases[c % bases.length]! + paths[n % paths.length]!, {})
    }
  }))
}

/** CPU seconds used so far by the database's backends (those alive now; the pool keeps them for the run). */
async function backendCpu(admin: pg.Client, database: string, seen: Map<number, number>): Promise<void> {
  const { rows } = await admin.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1', [database])
  for (const { pid } of rows) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
      seen.set(pid, (Number(fields[11]) + Number(fields[12])) / TICKS)
    } catch {
      // ended meanwhile
    }
  }
}

interface Row { instances: number; streams: number; runsPerSecond: number; commitsPerRun: number; walBytesPerRun: number; notifiesPerRun: Record<string, number>; notifyingCommitsPerRun: number; pgCpuMsPerRun: number }

async function measure(instances: number, streams: number): Promise<Row> {
  const name = `bench_scaling_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: POSTGRES_URL })
  await admin.connect()
  await admin.query(`create database ${name}`)
  const url = new URL(POSTGRES_URL)
  url.pathname = `/${name}`
  const listener = new pg.Client({ connectionString: url.toString() })
  try {
    const bases: string[] = []
    for (let i = 0; i < instances; i++) bases.push(await startService(url.toString()))
    const agentId = (await post(`${bases[0]}/api/agents`, { name: 'Bench agent', endpointUrl })).id
    const paths: string[] = []
    for (let s = 0; s < streams; s++) paths.push(await runPath(bases[0]!, agentId))
    const reader = new pg.Client({ connectionString: url.toString() })
    await reader.connect()
    const succeeded = async () => Number((await reader.query("select count(*) as n from runs where status = 'succeeded'")).rows[0].n)
    const waitFor = async (target: number) => {
      while ((await succeeded()) < target) await new Promise((r) => setTimeout(r, 20))
    }
    await startRuns(bases, paths, 50)
    await waitFor(50)
    await listener.connect()
    const notifies: Record<string, number> = {}
    // A commit's notifications reach the queue together: a change of sending backend starts another commit (two
    // commits of one backend in a row count as one: a slight undercount).
    let notifyingCommits = 0
    let lastSender = -1
    listener.on('notification', (message) => {
      notifies[message.channel] = (notifies[message.channel] ?? 0) + 1
      if (message.processId !== lastSender) notifyingCommits++
      lastSender = message.processId
    })
    for (const channel of ['tandem_events', 'tandem_deltas', 'jobs:insert']) await listener.query(`listen "${channel}"`)
    const counters = async () => (await admin.query('select xact_commit::bigint as commits, pg_current_wal_lsn() as lsn from pg_stat_database where datname = $1', [name])).rows[0]
    const before = await counters()
    const cpuBefore = new Map<number, number>()
    await backendCpu(admin, name, cpuBefore)
    const started = performance.now()
    await startRuns(bases, paths, RUNS)
    await waitFor(50 + RUNS)
    const seconds = (performance.now() - started) / 1000
    const cpuAfter = new Map<number, number>()
    await backendCpu(admin, name, cpuAfter)
    await new Promise((r) => setTimeout(r, 300)) // the last notifications
    const after = await counters()
    const wal = Number((await admin.query('select pg_wal_lsn_diff($1, $2) as bytes', [after.lsn, before.lsn])).rows[0].bytes)
    let cpu = 0
    for (const [pid, seconds] of cpuAfter) cpu += seconds - (cpuBefore.get(pid) ?? 0)
    await reader.end()
    return {
      instances,
      streams,
      runsPerSecond: Math.round(RUNS / seconds),
      commitsPerRun: Number(((Number(after.commits) - Number(before.commits)) / RUNS).toFixed(2)),
      walBytesPerRun: Math.round(wal / RUNS),
      notifiesPerRun: Object.fromEntries(Object.entries(notifies).map(([channel, n]) => [channel, Number((n / RUNS).toFixed(2))])),
      notifyingCommitsPerRun: Number((notifyingCommits / RUNS).toFixed(2)),
      pgCpuMsPerRun: Number(((cpu * 1000) / RUNS).toFixed(2)),
    }
  } finally {
    for (const child of children.splice(0)) {
      child.kill('SIGTERM')
      await new Promise((r) => child.once('exit', r))
    }
    await listener.end().catch(() => {})
    await admin.query(`drop database if exists ${name} with (force)`)
    await admin.end()
  }
}

if (!process.env.BENCH_NO_BUILD && spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' }).status !== 0) process.exit(1)
const rows: Row[] = []
for (const [instances, streams] of SETTINGS) {
  const row = await measure(instances, streams)
  console.log(JSON.stringify(row))
  rows.push(row)
}
console.log('\n| instances | streams | runs/s | commits/run | WAL bytes/run | notifying commits/run | NOTIFYs/run | PG CPU ms/run (backends) |')
console.log('|---|---|---|---|---|---|---|---|')
for (const r of rows) {
  const notifies = Object.values(r.notifiesPerRun).reduce((a, b) => a + b, 0)
  console.log(`| ${r.instances} | ${r.streams} | ${r.runsPerSecond} | ${r.commitsPerRun} | ${r.walBytesPerRun} | ${r.notifyingCommitsPerRun} | ${notifies.toFixed(2)} (${Object.entries(r.notifiesPerRun).map(([c, n]) => `${c} ${n}`).join(', ')}) | ${r.pgCpuMsPerRun} |`)
}
agent.close()
process.exit(0)
