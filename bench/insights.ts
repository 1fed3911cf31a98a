// `npm run bench:insights`: the scorecards at scale. BENCH_RUNS runs (default 100,000) × 3 phases over 90 days and
// BENCH_AGENTS agents (default 50), in 5 streams of 4 cycles each, their rollup rows (a phase run each, an ended
// wait per decision, and the day, hour and stream-or-cycle rows summing them) as the engine writes them, then
// BENCH_ROUNDS (default 40) calls each of: the list over the default 30 days and over 90 days, one agent's detail
// over 90 days (day buckets, breakdown), the 30-day list filtered by a stream and by a cycle, one agent's hourly
// detail over 72 hours, and over 40 days filtered by a stream. p50 and p95 per call. Measured twice: with every
// change folded into the summed rows, then with BENCH_NOTES (default 1,000) phase runs picked at random over the 90
// days noted as changed and not folded yet (src/insights/fold.ts; a second of runs at 1,000 a second, each in a
// period of its own: the worst case, as every such period is read from its rows). SQLite in a temporary file;
// PostgreSQL too with BENCH_POSTGRES_URL (a fresh database). A benchmark, not a test.
import { randomBytes, randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { onEachDatabase, percentile } from './each-database.js'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { backfillAgentDays } from '../src/db/migrations/0125_insight_agent_days.js'
import { backfillRollupDimensions } from '../src/db/migrations/0137_insight_rollup_dimensions.js'
import type { InsightPhaseRunTable, InsightWaitTable } from '../src/insights/insights.table.js'

const RUNS = Number(process.env.BENCH_RUNS ?? 100_000)
const AGENTS = Number(process.env.BENCH_AGENTS ?? 50)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 40)
const NOTES = Number(process.env.BENCH_NOTES ?? 1000)
const DAY = 86_400_000
const BATCH = 1000

async function json(app: FastifyInstance, method: 'GET' | 'POST', url: string, body?: Record<string, unknown>) {
  const res = await app.inject({ method, url, ...(body === undefined ? {} : { payload: body }) })
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`)
  return res.json()
}

const pick = <T>(items: T[]) => items[Math.floor(Math.random() * items.length)]!

async function seed(app: FastifyInstance, databaseIsSqlite: boolean): Promise<{ agents: string[]; streamId: string; cycleId: string }> {
  const db = app.database.db
  const workspaceId = (await json(app, 'GET', '/api/me')).workspaceId
  const agents: string[] = []
  for (let i = 0; i < AGENTS; i++) agents.push((await json(app, 'POST', '/api/agents', { name: `Agent ${i}`, providerType: 'custom_token_only' })).id)
  // Real streams and cycles (the filters answer 404 for ids not in the workspace): 5 streams of 4 cycles of 3 phases.
  const streams: string[] = []
  for (let i = 0; i < 5; i++) streams.push((await json(app, 'POST', '/api/streams', { name: `Stream ${i}` })).id)
  const cycles: Array<{ id: string; streamId: string; phases: string[] }> = []
  for (let i = 0; i < 20; i++) {
    const streamId = streams[i % streams.length]!
    const phases = [randomUUID(), randomUUID(), randomUUID()]
    const phasesTemplate = phases.map((id, p) => ({ id, agentId: agents[(i * 3 + p) % agents.length], goal: 'g', instructions: 'i', autoAdvance: p === 1, phaseName: `Phase ${p}`, operatorPool: ['maria'] }))
    cycles.push({ id: (await json(app, 'POST', `/api/cycles/streams/${streamId}/cycles`, { triggerName: `bench ${i}`, description: 'bench', phasesTemplate })).id, streamId, phases })
  }
  const now = Date.now()
  let phases: InsightPhaseRunTable[] = []
  let waits: InsightWaitTable[] = []
  // Rows go in 10,000 runs to a transaction: on SQLite each transaction appends every page it touches to the WAL,
  // so a transaction per small batch would write the random pages of the indexes again and again.
  const flush = async () => {
    await db.transaction().execute(async (trx) => {
      for (let i = 0; i < phases.length; i += BATCH) await trx.insertInto('insight_phase_runs').values(phases.slice(i, i + BATCH)).execute()
      for (let i = 0; i < waits.length; i += BATCH) await trx.insertInto('insight_waits').values(waits.slice(i, i + BATCH)).execute()
    })
    phases = []
    waits = []
  }
  for (let r = 0; r < RUNS; r++) {
    const cycle = pick(cycles)
    const streamId = cycle.streamId
    const runStart = now - Math.random() * 90 * DAY
    for (let p = 0; p < 3; p++) {
      const gated = p !== 1
      const id = randomUUID()
      const startedAt = new Date(runStart + p * 60_000).toISOString()
      const revised = gated && Math.random() < 0.2 ? 1 : 0
      const outcome = !gated ? null : pick(['approved', 'approved', 'approved', 'rejected', 'expired'])
      const agentId = pick(agents)
      phases.push({
        phase_run_id: id, workspace_id: workspaceId, agent_id: agentId, run_id: randomUUID(), stream_id: streamId, cycle_id: cycle.id, trigger_name: 'bench',
        phase_id: cycle.phases[p]!, phase_name: `Phase ${p}`, started_at: startedAt, gated: gated ? 1 : 0, answered: 1,
        approved: outcome === 'approved' ? 1 : 0, revised, rejected: outcome === 'rejected' ? 1 : 0, expired: outcome === 'expired' ? 1 : 0, overridden: 0,
        tool_auto: Math.floor(Math.random() * 3), tool_approved: 0, tool_denied: 0, tool_failed: 0, questions: 0,
        input_tokens: 1000, output_tokens: 200, cost_usd: 0.0014, run_failed: 0,
      })
      const ended = [...(revised ? ['revised'] : []), ...(outcome ? [outcome] : [])] as InsightWaitTable['outcome'][]
      ended.forEach((o, seq) => {
        waits.push({
          phase_run_id: id, seq, workspace_id: workspaceId, agent_id: agentId, stream_id: streamId, cycle_id: cycle.id, phase_id: cycle.phases[p]!,
          started_at: startedAt, outcome: o, decision_ms: o === 'expired' ? null : Math.floor(Math.random() * 3_600_000), ended_at: startedAt,
        })
      })
    }
    if ((r + 1) % 10_000 === 0) await flush()
  }
  await flush()
  // The day, hour and stream-or-cycle rollups the fold keeps by deltas, made at once here as the migrations make
  // them (the same sums: test/insights/day-rollups.test.ts, test/insights/rollup-dimensions.test.ts).
  await db.transaction().execute(async (trx) => {
    await backfillAgentDays(trx)
    await backfillRollupDimensions(trx)
  })
  await sql`analyze`.execute(db)
  if (databaseIsSqlite) await sql`pragma wal_checkpoint(truncate)`.execute(db)
  return { agents, streamId: streams[0]!, cycleId: cycles[0]!.id }
}

async function timed(app: FastifyInstance, url: string): Promise<{ p50: number; p95: number; rows: number }> {
  const times: number[] = []
  let rows = 0
  for (let i = 0; i < ROUNDS; i++) {
    const started = performance.now()
    const body = await json(app, 'GET', url)
    times.push(performance.now() - started)
    rows = body.data?.length ?? body.series?.length ?? 0
  }
  times.sort((a, b) => a - b)
  return { p50: percentile(times, 50), p95: percentile(times, 95), rows }
}

async function measure(label: string, databaseUrl: string): Promise<void> {
  const config = loadConfig({ LOG_LEVEL: 'silent', TANDEM_AUTH: 'local', TANDEM_WORKERS: '0', TANDEM_INSIGHTS_FOLD_MS: '0', TANDEM_SECRET_KEY: randomBytes(32).toString('base64'), DATABASE_URL: databaseUrl })
  const app = await buildApp(config)
  await app.ready()
  try {
    const seeding = performance.now()
    const { agents, streamId, cycleId } = await seed(app, databaseUrl.startsWith('sqlite:'))
    console.log(`${label}: seeded ${RUNS} runs × 3 phases, ${AGENTS} agents, 90 days in ${((performance.now() - seeding) / 1000).toFixed(1)} s`)
    const from90 = new Date(Date.now() - 90 * DAY).toISOString()
    const calls = async () => ({
      'list, 30 days': await timed(app, '/api/insights/agents?limit=100'),
      'list, 90 days': await timed(app, `/api/insights/agents?limit=100&from=${from90}`),
      'detail, 90 days': await timed(app, `/api/insights/agents/${agents[0]}?from=${from90}`),
      'list, 30 days, one stream': await timed(app, `/api/insights/agents?limit=100&streamId=${streamId}`),
      'list, 30 days, one cycle': await timed(app, `/api/insights/agents?limit=100&cycleId=${cycleId}`),
      'detail, 72 hours (hourly)': await timed(app, `/api/insights/agents/${agents[0]}?bucket=hour&from=${new Date(Date.now() - 3 * DAY).toISOString()}`),
      'detail, 40 days hourly, one stream': await timed(app, `/api/insights/agents/${agents[0]}?bucket=hour&from=${new Date(Date.now() - 40 * DAY).toISOString()}&streamId=${streamId}`),
    })
    for (const [name, r] of Object.entries(await calls())) console.log(`${label}: all folded: ${name}: p50 ${r.p50.toFixed(1)} ms, p95 ${r.p95.toFixed(1)} ms (${r.rows} rows)`)
    await sql`insert into insight_unfolded (phase_run_id, workspace_id, agent_id, stream_id, cycle_id, started_at, old, old_wait_seq)
      select phase_run_id, workspace_id, agent_id, stream_id, cycle_id, started_at, null, -1 from insight_phase_runs order by random() limit ${NOTES}`.execute(app.database.db)
    for (const [name, r] of Object.entries(await calls())) console.log(`${label}: ${NOTES} notes: ${name}: p50 ${r.p50.toFixed(1)} ms, p95 ${r.p95.toFixed(1)} ms (${r.rows} rows)`)
  } finally {
    await app.close()
  }
}

await onEachDatabase('insights', measure)
