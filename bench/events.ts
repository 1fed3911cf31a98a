// `npm run bench:events`: SUBSCRIBERS Server-Sent Events clients on one stream while messages are posted at a
// steady RATE; reports the delivery latency (event createdAt — taken in the writing transaction just before it
// commits — to the moment each client has read the event) and the service's resident memory.
// The service (production build) runs pinned to core 0 and this load generator to core 1, as in `npm run bench`.
// Settings: BENCH_SUBSCRIBERS (1000), BENCH_RATE (messages/s, 50), BENCH_SECONDS (20), BENCH_DATABASE_URL
// (default: SQLite in a temporary file; a postgres:// URL measures PostgreSQL with LISTEN/NOTIFY), BENCH_NO_PIN=1.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import http from 'node:http'
import { mkdirSync, readFileSync, rmSync } from 'node:fs'
import { freePort } from './free-port.js'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 1000)
const RATE = Number(process.env.BENCH_RATE ?? 50)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20)
const WARMUP_SECONDS = 3
const hasTaskset = !process.env.BENCH_NO_PIN && spawnSync('taskset', ['-c', '0', 'true']).status === 0

if (hasTaskset && !process.env.BENCH_PINNED) {
  const run = spawnSync('taskset', ['-c', '1', process.execPath, ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit', env: { ...process.env, BENCH_PINNED: '1' } })
  process.exit(run.status ?? 1)
}

const work = join(tmpdir(), `tandem-bench-events-${process.pid}`)
mkdirSync(work, { recursive: true })
let service: ChildProcess | undefined
process.on('exit', () => {
  service?.kill('SIGKILL')
  rmSync(work, { recursive: true, force: true })
})

function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match ? Number(match[1]) / 1024 : NaN
}

/** CPU seconds (user + system) a process has used, from /proc. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
  return (Number(fields[11]) + Number(fields[12])) / 100
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN

async function main(): Promise<void> {
  const built = spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' })
  if (built.status !== 0) throw new Error('build failed')
  const port = await freePort()
  const databaseUrl = process.env.BENCH_DATABASE_URL ?? `sqlite:${join(work, 'bench.db')}`
  const command = hasTaskset ? ['taskset', '-c', '0', process.execPath, 'dist/main.js'] : [process.execPath, 'dist/main.js']
  service = spawn(command[0] as string, command.slice(1), {
    env: { ...process.env, PORT: String(port), DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', TANDEM_AUTH: 'local' },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const base = `http://127.0.0.1:${port}`
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/healthz`)).status === 200) break
    } catch {
      if (i > 400) throw new Error('the service did not start')
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  const servicePid = service.pid as number
  const rssIdle = rssMb(servicePid)
  const streamId = ((await (await fetch(`${base}/api/streams`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"bench"}' })).json()) as { id: string }).id

  // Subscribers: each counts the events it reads; latency samples are taken after the warm-up.
  const createdAt = new Map<number, number>()
  const latencies: number[] = []
  let measuring = false
  let received = 0
  let dropped = 0
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity })
  await Promise.all(
    Array.from({ length: SUBSCRIBERS }, () =>
      new Promise<void>((resolve, reject) => {
        const request = http.get(`${base}/api/streams/${streamId}/events`, { agent, headers: { accept: 'text/event-stream' } }, (response) => {
          if (response.statusCode !== 200) return reject(new Error(`subscriber got ${response.statusCode}`))
          response.setEncoding('utf8')
          let buffer = ''
          response.on('data', (chunk: string) => {
            const at = Date.now()
            buffer += chunk
            let end
            while ((end = buffer.indexOf('\n\n')) !== -1) {
              const frame = buffer.slice(0, end)
              buffer = buffer.slice(end + 2)
              if (!frame.startsWith('id: ')) continue
              const id = Number(frame.slice(4, frame.indexOf('\n')))
              let created = createdAt.get(id)
              if (created === undefined) {
                created = Date.parse((JSON.parse(frame.slice(frame.indexOf('data: ') + 6)) as { createdAt: string }).createdAt)
                createdAt.set(id, created)
              }
              received++
              if (measuring) latencies.push(at - created)
            }
          })
          response.on('close', () => dropped++)
          resolve()
        })
        request.on('error', reject)
      }),
    ),
  )
  const rssConnected = rssMb(servicePid)

  // Writers: one message every 1000/RATE ms, on a fixed schedule (a late tick does not bunch the next ones).
  const body = JSON.stringify({ content: { blocks: [{ type: 'rich_text', elements: [{ type: 'paragraph', children: [{ type: 'text', text: 'A steady stream of operator chatter, about one line long, to follow live.' }] }] }] } })
  let posted = 0
  let failed = 0
  const failures = new Map<string, number>()
  const fail = (why: string) => {
    failed++
    failures.set(why, (failures.get(why) ?? 0) + 1)
  }
  const started = Date.now()
  const serviceCpuStart = cpuSeconds(servicePid)
  const ownCpuStart = process.cpuUsage()
  const total = (WARMUP_SECONDS + SECONDS) * RATE
  let peakRss = rssConnected
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssMb(servicePid))), 250)
  await new Promise<void>((resolve) => {
    const tick = () => {
      if (posted >= total) return resolve()
      measuring = posted >= WARMUP_SECONDS * RATE
      posted++
      fetch(`${base}/api/chat/streams/${streamId}/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(
        (res) => (res.status === 201 ? res.arrayBuffer() : (fail(String(res.status)), res.arrayBuffer())),
        (error: Error) => fail((error.cause as Error | undefined)?.message ?? error.message),
      )
      setTimeout(tick, Math.max(0, started + (posted * 1000) / RATE - Date.now()))
    }
    tick()
  })
  const elapsed = (Date.now() - started) / 1000
  const serviceCpu = (cpuSeconds(servicePid) - serviceCpuStart) / elapsed
  const ownCpuUsed = process.cpuUsage(ownCpuStart)
  const ownCpu = (ownCpuUsed.user + ownCpuUsed.system) / 1e6 / elapsed
  await new Promise((r) => setTimeout(r, 2000))
  clearInterval(sampler)
  latencies.sort((a, b) => a - b)
  const expected = (SECONDS * RATE) * SUBSCRIBERS
  const result = {
    database: databaseUrl.split(':')[0],
    subscribers: SUBSCRIBERS,
    ratePerSecond: RATE,
    seconds: SECONDS,
    postsFailed: failed,
    failures: Object.fromEntries(failures),
    cpuShare: { service: Number(serviceCpu.toFixed(2)), loadGenerator: Number(ownCpu.toFixed(2)) },
    eventsReceived: received,
    samples: latencies.length,
    samplesExpected: expected,
    subscribersDropped: dropped,
    latencyMs: { p50: percentile(latencies, 50), p90: percentile(latencies, 90), p99: percentile(latencies, 99), max: latencies[latencies.length - 1] },
    rssMb: { idle: Math.round(rssIdle), connected: Math.round(rssConnected), peak: Math.round(peakRss) },
  }
  console.log(JSON.stringify(result, null, 2))
  agent.destroy()
  service.kill('SIGTERM')
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error)
    process.exit(1)
  },
)
