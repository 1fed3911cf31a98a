// `npm run bench:runs`: run throughput and next-phase dispatch latency, against a local webhook agent that
// answers at once. Production build (dist/), SQLite in a temporary file, then PostgreSQL with one and with two
// instances (a fresh database each). Two measurements per setting:
//   throughput: BENCH_RUNS one-phase runs started by 32 concurrent clients; runs/s = runs / (first start →
//               last run succeeded), completion read from the database;
//   dispatch:   BENCH_LATENCY_RUNS two-phase auto-advancing runs, BENCH_IN_FLIGHT at a time; for each, the time from the agent
//               sending its answer to phase 1 to the agent receiving phase 2's task (p50, p99).
// Settings: BENCH_NO_BUILD=1 (use dist/ as it is), BENCH_SERVICE_NODE_ARGS, BENCH_RUNS (default 3000), BENCH_LATENCY_RUNS (default 400), BENCH_IN_FLIGHT (default 4), BENCH_POSTGRES_URL, BENCH_SKIP_POSTGRES=1.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { freePort } from './free-port.js'
import { randomBytes, randomUUID } from 'node:crypto'
import { mkdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SqliteDatabase from 'better-sqlite3'
import pg from 'pg'

const RUNS = Number(process.env.BENCH_RUNS ?? 3000)
const LATENCY_RUNS = Number(process.env.BENCH_LATENCY_RUNS ?? 400)
const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const CLIENTS = 32
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 4)
const work = join(tmpdir(), `tandem-bench-runs-${process.pid}`)
mkdirSync(work, { recursive: true })
const children: ChildProcess[] = []
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL')
  rmSync(work, { recursive: true, force: true })
})

// Runs whose second phase has reached the agent, and who waits for that.
const arrivedRuns = new Set<string>()
const arrivalWaiters = new Map<string, () => void>()
function secondPhaseArrived(runId: string) {
  arrivedRuns.add(runId)
  arrivalWaiters.get(runId)?.()
}
const secondPhaseOf = (runId: string) =>
  arrivedRuns.has(runId) ? Promise.resolve() : new Promise<void>((resolve) => arrivalWaiters.set(runId, resolve))

// The agent: answers every task at once; remembers when it answered phase 0 and when phase 1 arrived.
const answeredAt = new Map<string, number>()
const dispatchMs: number[] = []
const agent = createServer((req, res) => {
  const chunks: Buffer[] = []
  req.on('data', (c) => chunks.push(c))
  req.on('end', () => {
    const arrived = performance.now()
    const task = JSON.parse(Buffer.concat(chunks).toString('utf8'))
    if (task.phase.index === 1) {
      const answered = answeredAt.get(task.run.id)
      if (answered !== undefined) dispatchMs.push(arrived - answered)
      secondPhaseArrived(task.run.id)
    }
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ output: { text: `done ${task.phase.index}` } }), () => {
      if (task.phase.index === 0) answeredAt.set(task.run.id, performance.now())
    })
  })
})
await new Promise<void>((resolve) => agent.listen(0, '127.0.0.1', resolve))
const endpointUrl = `http://127.0.0.1:${(agent.address() as AddressInfo).port}/hook`

// Instances on one database share the vault key: one seals a push task's token, another may deliver it.
const SECRET_KEY = process.env.TANDEM_SECRET_KEY ?? randomBytes(32).toString('base64')

async function startService(databaseUrl: string): Promise<string> {
  const port = await freePort()
  // BENCH_SERVICE_NODE_ARGS: extra node flags for the service (e.g. --cpu-prof --cpu-prof-dir=/tmp/prof).
  const nodeArgs = process.env.BENCH_SERVICE_NODE_ARGS?.split(' ').filter(Boolean) ?? []
  const child = spawn(process.execPath, [...nodeArgs, 'dist/main.js'], {
    env: {
      ...process.env, PORT: String(port), DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', TANDEM_AUTH: 'local', TANDEM_EGRESS_ALLOW: '127.0.0.0/8',
      TANDEM_SECRET_KEY: SECRET_KEY,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  children.push(child)
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; i < 400; i++) {
    try {
      if ((await fetch(`${url}/healthz`)).status === 200) return url
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error('the service did not start')
}

/** Stops the services gracefully (a --cpu-prof profile is written on a clean exit). */
async function stopServices(): Promise<void> {
  for (const child of children.splice(0)) {
    child.kill('SIGTERM')
    await new Promise((r) => child.once('exit', r))
  }
}

async function post(url: string, body: unknown): Promise<{ id: string }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  if (res.status >= 300) throw new Error(`${url} → ${res.status} ${await res.text()}`)
  return (await res.json()) as { id: string }
}

async function setUp(base: string, phases: number): Promise<string> {
  const agentId = (await post(`${base}/api/agents`, { name: 'Bench agent', endpointUrl })).id
  const streamId = (await post(`${base}/api/streams`, { name: 'bench' })).id
  const phase = () => ({ id: randomUUID(), agentId, goal: 'g', instructions: 'i', autoAdvance: true, phaseName: 'p', operatorPool: [] })
  const cycleId = (await post(`${base}/api/cycles/streams/${streamId}/cycles`, { triggerName: 'bench', description: 'd', phasesTemplate: Array.from({ length: phases }, phase) })).id
  return `/api/cycles/streams/${streamId}/cycles/${cycleId}/runs`
}

/** Starts `count` runs over `clients` concurrent clients, spread over the instances; resolves when all are started. */
async function startRuns(bases: string[], path: string, count: number, clients: number): Promise<void> {
  let next = 0
  await Promise.all(Array.from({ length: clients }, async (_, c) => {
    while (next < count) {
      next++
      await post(bases[c % bases.length] + path, {})
    }
  }))
}

async function waitUntil(count: () => Promise<number>, target: number): Promise<void> {
  for (let i = 0; i < 12000; i++) {
    if ((await count()) >= target) return
    await new Promise((r) => setTimeout(r, 20))
  }
  throw new Error('runs did not finish')
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN
}

interface Result { setting: string; runsPerSecond: number; dispatchP50: number; dispatchP99: number }

async function measure(setting: string, bases: string[], succeeded: () => Promise<number>): Promise<Result> {
  const base = bases[0] as string
  const onePhase = await setUp(base, 1)
  await startRuns(bases, onePhase, 50, 8) // warm-up
  await waitUntil(succeeded, 50)
  const started = performance.now()
  await startRuns(bases, onePhase, RUNS, CLIENTS)
  await waitUntil(succeeded, 50 + RUNS)
  const runsPerSecond = RUNS / ((performance.now() - started) / 1000)
  const twoPhases = await setUp(base, 2)
  dispatchMs.length = 0
  // BENCH_IN_FLIGHT (default 4) runs in flight: a client starts its next run once the last one's second phase has reached the agent,
  // so that the figure is the engine's hand-over, not a queue of runs started all at once.
  let left = LATENCY_RUNS
  await Promise.all(Array.from({ length: IN_FLIGHT }, async (_, c) => {
    while (left > 0) {
      left--
      const run = await post(bases[c % bases.length] + twoPhases, {})
      await secondPhaseOf(run.id)
    }
  }))
  await waitUntil(succeeded, 50 + RUNS + LATENCY_RUNS)
  return { setting, runsPerSecond: Math.round(runsPerSecond), dispatchP50: Number(percentile(dispatchMs, 50).toFixed(2)), dispatchP99: Number(percentile(dispatchMs, 99).toFixed(2)) }
}

console.log('building dist/ …')
if (!process.env.BENCH_NO_BUILD && spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' }).status !== 0) process.exit(1)
const results: Result[] = []

{
  const file = join(work, 'bench.db')
  const base = await startService(`sqlite:${file}`)
  const reader = new SqliteDatabase(file, { readonly: true })
  const count = reader.prepare("select count(*) as n from runs where status = 'succeeded'")
  results.push(await measure('SQLite, 1 instance', [base], async () => (count.get() as { n: number }).n))
  reader.close()
  await stopServices()
}

if (!process.env.BENCH_SKIP_POSTGRES) {
  for (const instances of [1, 2]) {
    const name = `bench_runs_${randomBytes(4).toString('hex')}`
    const admin = new pg.Client({ connectionString: POSTGRES_URL })
    await admin.connect()
    await admin.query(`create database ${name}`)
    const url = new URL(POSTGRES_URL)
    url.pathname = `/${name}`
    const bases = [await startService(url.toString())]
    if (instances === 2) bases.push(await startService(url.toString()))
    const client = new pg.Client({ connectionString: url.toString() })
    await client.connect()
    results.push(await measure(`PostgreSQL, ${instances} instance${instances === 1 ? '' : 's'}`, bases, async () => Number((await client.query("select count(*) as n from runs where status = 'succeeded'")).rows[0].n)))
    await client.end()
    await stopServices()
    await admin.query(`drop database ${name} with (force)`)
    await admin.end()
  }
}

console.table(results)
console.log(JSON.stringify({ runs: RUNS, latencyRuns: LATENCY_RUNS, results }))
agent.close()
process.exit(0)
