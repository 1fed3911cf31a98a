// `npm run bench:schedules`: how late schedules fire under load. In one process (the scheduler shares the
// event loop with the load): BENCH_SCHEDULES schedules (default 20) on their own streams, every 2 seconds
// (`*/2 * * * * *`), for BENCH_SECONDS (default 30), while BENCH_CLIENTS clients (default 16) post chat
// messages as fast as they are answered. Lateness of a run = its createdAt − its tick (the even second at or
// before it). SQLite in a temporary file; PostgreSQL too with BENCH_POSTGRES_URL (a fresh database is made).
import { randomBytes, randomUUID } from 'node:crypto'
import { onEachDatabase, percentile } from './each-database.js'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'

const SCHEDULES = Number(process.env.BENCH_SCHEDULES ?? 20)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 30)
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 16)
const NIL = '00000000-0000-0000-0000-000000000000'

async function json(app: FastifyInstance, method: 'GET' | 'POST' | 'PATCH', url: string, body?: Record<string, unknown>) {
  const res = await app.inject({ method, url, ...(body === undefined ? {} : { payload: body }) })
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`)
  return res.json()
}

async function measure(label: string, databaseUrl: string): Promise<void> {
  const config = loadConfig({ LOG_LEVEL: 'silent', TANDEM_AUTH: 'local', TANDEM_SECRET_KEY: randomBytes(32).toString('base64'), DATABASE_URL: databaseUrl })
  const app = await buildApp(config)
  await app.ready()
  const streams: string[] = []
  const schedules: string[] = []
  for (let i = 0; i < SCHEDULES; i++) {
    const stream = await json(app, 'POST', '/api/streams', { name: `bench-${i}` })
    streams.push(stream.id)
    await json(app, 'POST', `/api/cycles/streams/${stream.id}/cycles`, {
      triggerName: 'tick', description: 'd', phasesTemplate: [{ id: randomUUID(), agentId: NIL, goal: 'g', instructions: 'i', autoAdvance: true, phaseName: 'P', operatorPool: [] }],
    })
    schedules.push((await json(app, 'POST', `/api/streams/${stream.id}/schedules`, { triggerName: 'tick', cron: '*/2 * * * * *' })).id)
  }
  const until = Date.now() + SECONDS * 1000
  let posts = 0
  const content = { blocks: [{ type: 'rich_text', elements: [{ type: 'paragraph', children: [{ type: 'text', text: 'load' }] }] }] }
  await Promise.all(Array.from({ length: CLIENTS }, async (_, c) => {
    while (Date.now() < until) {
      await json(app, 'POST', `/api/chat/streams/${streams[c % streams.length]}/messages`, { content })
      posts++
    }
  }))
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, until - Date.now())))
  for (const id of schedules) await json(app, 'PATCH', `/api/schedules/${id}`, { enabled: false })
  const lateness: number[] = []
  for (const streamId of streams) {
    for (let cursor: string | null = null; ;) {
      const page: { data: Array<{ createdAt: string }>; nextCursor: string | null } = await json(app, 'GET', `/api/cycles/streams/${streamId}/runs?limit=100${cursor ? `&cursor=${cursor}` : ''}`)
      for (const run of page.data) {
        const at = Date.parse(run.createdAt)
        lateness.push(at - Math.floor(at / 2000) * 2000)
      }
      cursor = page.nextCursor
      if (!cursor) break
    }
  }
  lateness.sort((a, b) => a - b)
  const expected = SCHEDULES * Math.floor(SECONDS / 2)
  console.log(`${label}: ${lateness.length} firings (≈${expected} ticks) under ${Math.round(posts / SECONDS)} message posts/s — late by p50 ${percentile(lateness, 50)} ms, p95 ${percentile(lateness, 95)} ms, p99 ${percentile(lateness, 99)} ms, max ${lateness[lateness.length - 1]} ms`)
  await app.close()
}

await onEachDatabase('schedules', measure)
