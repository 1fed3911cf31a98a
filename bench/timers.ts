// `npm run bench:timers`: how late decision timers take effect under load. In one process: BENCH_PHASES phases
// (default 200) await a decision with `remindAfter: PT10S`, their runs started together (BENCH_STREAMS streams,
// default 10), so their reminders come due within the same moment, while BENCH_CLIENTS clients (default 8) post
// chat messages as fast as they are answered. Lateness of a reminder = its `decision.reminder` event's createdAt −
// the item's `remindAt`. SQLite in a temporary file; PostgreSQL too with BENCH_POSTGRES_URL (a fresh database).
import { randomBytes, randomUUID } from 'node:crypto'
import { onEachDatabase, percentile } from './each-database.js'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'

const PHASES = Number(process.env.BENCH_PHASES ?? 200)
const STREAMS = Number(process.env.BENCH_STREAMS ?? 10)
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 8)
const REMIND_AFTER_S = 10
const NIL = '00000000-0000-0000-0000-000000000000'

async function json(app: FastifyInstance, method: 'GET' | 'POST', url: string, body?: Record<string, unknown>) {
  const res = await app.inject({ method, url, ...(body === undefined ? {} : { payload: body }) })
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`)
  return res.json()
}


async function reminders(app: FastifyInstance, streamId: string): Promise<Array<{ createdAt: string; data: { remindAt: string } }>> {
  const out = []
  for (let after = 0; ;) {
    const page = await json(app, 'GET', `/api/streams/${streamId}/events?limit=100&after=${after}`)
    out.push(...page.data.filter((e: { type: string }) => e.type === 'decision.reminder'))
    if (page.data.length === 0) return out
    after = Number(page.data[page.data.length - 1].id)
  }
}

async function measure(label: string, databaseUrl: string): Promise<void> {
  const config = loadConfig({ LOG_LEVEL: 'silent', TANDEM_AUTH: 'local', TANDEM_SECRET_KEY: randomBytes(32).toString('base64'), DATABASE_URL: databaseUrl })
  const app = await buildApp(config)
  await app.ready()
  const streams: string[] = []
  const perStream = Math.ceil(PHASES / STREAMS)
  for (let i = 0; i < STREAMS; i++) {
    const stream = await json(app, 'POST', '/api/streams', { name: `bench-${i}` })
    streams.push(stream.id)
    await json(app, 'POST', `/api/cycles/streams/${stream.id}/cycles`, {
      triggerName: 'pay', description: 'd', policy: { decision: { remindAfter: `PT${REMIND_AFTER_S}S` } },
      phasesTemplate: [{ id: randomUUID(), agentId: NIL, goal: 'g', instructions: 'i', autoAdvance: false, phaseName: 'P', operatorPool: [] }],
    })
  }
  const startedAt = Date.now()
  await Promise.all(streams.map(async (streamId) => {
    const cycleId = (await json(app, 'GET', `/api/cycles/streams/${streamId}/cycles`)).data[0].id
    for (let n = 0; n < perStream; n++) await json(app, 'POST', `/api/cycles/streams/${streamId}/cycles/${cycleId}/runs`, { input: {} })
  }))
  const spread = Date.now() - startedAt
  const until = startedAt + (REMIND_AFTER_S + 8) * 1000
  let posts = 0
  const content = { blocks: [{ type: 'rich_text', elements: [{ type: 'paragraph', children: [{ type: 'text', text: 'load' }] }] }] }
  await Promise.all(Array.from({ length: CLIENTS }, async (_, c) => {
    while (Date.now() < until) {
      await json(app, 'POST', `/api/chat/streams/${streams[c % streams.length]}/messages`, { content })
      posts++
    }
  }))
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, until - Date.now())))
  const lateness: number[] = []
  for (const streamId of streams) for (const event of await reminders(app, streamId)) lateness.push(Date.parse(event.createdAt) - Date.parse(event.data.remindAt))
  lateness.sort((a, b) => a - b)
  const load = CLIENTS > 0 ? `${CLIENTS} clients posting ≈${Math.round(posts / ((until - startedAt) / 1000))} messages/s` : 'no other load'
  console.log(`${label}: ${lateness.length}/${streams.length * perStream} reminders (runs started within ${spread} ms; ${load}) — late by p50 ${percentile(lateness, 50)} ms, p95 ${percentile(lateness, 95)} ms, p99 ${percentile(lateness, 99)} ms, max ${lateness.at(-1)} ms`)
  await app.close()
}

await onEachDatabase('timers', measure)
