// `npm run bench:stream`: how long a streamed delta takes from the vendor to the chat. A fake webhook agent on
// 127.0.0.1 answers one task with Server-Sent Events, a delta every BENCH_GAP_MS (default 40 ms, so coalescing
// does not join them) for BENCH_DELTAS deltas (default 300); BENCH_SUBSCRIBERS (default 100) SSE clients follow
// the stream. Each delta's text carries its sequence number; the latency is from the moment the fake vendor
// wrote it to the moment each subscriber has parsed its message.delta. Reports p50/p99/max (target p99 ≤ 50 ms).
// Everything runs in this one process (server, vendor and clients share the event loop and the clock), so the
// figures include their contention: an upper bound. BENCH_DATABASE_URL: default SQLite in a temporary file; a
// postgres:// URL measures the NOTIFY path (set TANDEM_SECRET_KEY).
import http from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'

const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 100)
const DELTAS = Number(process.env.BENCH_DELTAS ?? 300)
const GAP_MS = Number(process.env.BENCH_GAP_MS ?? 40)

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'tandem-bench-stream-'))
  const sentAt = new Map<number, number>()
  const vendor = http.createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      let i = 0
      const next = () => {
        if (i < DELTAS) {
          sentAt.set(i, performance.now())
          res.write(`data: ${JSON.stringify({ delta: `<${i}>` })}\n\n`)
          i += 1
          setTimeout(next, GAP_MS)
        } else res.end(`data: ${JSON.stringify({ output: { text: 'done' } })}\n\n`)
      }
      next()
    })
  })
  await new Promise<void>((resolve) => vendor.listen(0, '127.0.0.1', resolve))
  const vendorUrl = `http://127.0.0.1:${(vendor.address() as AddressInfo).port}/`

  const config = loadConfig({
    LOG_LEVEL: 'warn', TANDEM_AUTH: 'local', TANDEM_EGRESS_ALLOW: '127.0.0.0/8', TANDEM_DISPATCH_TIMEOUT_MS: String(DELTAS * GAP_MS + 30_000),
    TANDEM_SECRET_KEY: process.env.TANDEM_SECRET_KEY ?? randomBytes(32).toString('base64'),
    DATABASE_URL: process.env.BENCH_DATABASE_URL ?? `sqlite:${join(work, 'bench.db')}`,
  })
  const app = await buildApp(config)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`)
    return (await res.json()) as { id: string }
  }
  const agent = await post('/api/agents', { name: 'Streamer', providerType: 'custom_webhook', endpointUrl: vendorUrl, capabilities: { streaming: true, tools: [] } })
  const stream = await post('/api/streams', { name: `bench ${Date.now()}` })
  const cycle = await post(`/api/cycles/streams/${stream.id}/cycles`, {
    triggerName: 'bench', description: 'bench',
    phasesTemplate: [{ id: '6a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d', agentId: agent.id, phaseName: 'Stream', goal: 'g', instructions: 'i', autoAdvance: true, operatorPool: [] }],
  })

  const latencies: number[] = []
  let completed = 0
  let deltaEvents = 0
  const subscribers: http.ClientRequest[] = []
  await Promise.all(
    Array.from({ length: SUBSCRIBERS }, () =>
      new Promise<void>((resolve, reject) => {
        const request = http.get(`${base}/api/streams/${stream.id}/events`, { headers: { accept: 'text/event-stream' } }, (response) => {
          response.setEncoding('utf8')
          let buffer = ''
          response.on('data', (chunk: string) => {
            buffer += chunk
            let end: number
            while ((end = buffer.indexOf('\n\n')) !== -1) {
              const frame = buffer.slice(0, end)
              buffer = buffer.slice(end + 2)
              if (frame.startsWith('event: message.delta\n')) {
                const at = performance.now()
                deltaEvents += 1
                const data = JSON.parse(frame.slice(frame.indexOf('data: ') + 6)) as { text: string }
                for (const match of data.text.matchAll(/<(\d+)>/g)) {
                  const sent = sentAt.get(Number(match[1]))
                  if (sent !== undefined) latencies.push(at - sent)
                }
              } else if (frame.includes('event: message.completed')) completed += 1
            }
          })
          resolve()
        })
        request.on('error', reject)
        subscribers.push(request)
      }),
    ),
  )
  await new Promise((r) => setTimeout(r, 500))
  await post(`/api/cycles/streams/${stream.id}/cycles/${cycle.id}/runs`, {})
  const until = Date.now() + DELTAS * GAP_MS + 20_000
  while (completed < SUBSCRIBERS && Date.now() < until) await new Promise((r) => setTimeout(r, 100))

  latencies.sort((a, b) => a - b)
  const fmt = (ms: number) => `${ms.toFixed(1)} ms`
  console.log(`bench:stream — ${SUBSCRIBERS} subscribers, ${DELTAS} deltas ${GAP_MS} ms apart, ${app.database.dialect}`)
  console.log(`  deltas received: ${latencies.length} of ${SUBSCRIBERS * DELTAS} (${deltaEvents} message.delta events), message.completed: ${completed}/${SUBSCRIBERS}`)
  console.log(`  vendor → subscriber latency: p50 ${fmt(percentile(latencies, 50))}, p99 ${fmt(percentile(latencies, 99))}, max ${fmt(latencies.at(-1) ?? NaN)} (target p99 ≤ 50 ms)`)
  for (const request of subscribers) request.destroy()
  await app.close()
  vendor.closeAllConnections()
  vendor.close()
  rmSync(work, { recursive: true, force: true })
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error)
    process.exit(1)
  },
)
