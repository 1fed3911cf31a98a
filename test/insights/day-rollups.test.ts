// The day rollups (docs/insights.md) on both databases: per-phase-run and wait rows over several days, written and
// then rewritten with the engine's own notes and folded now and then in small batches, give the list and the day
// series exactly the figures computed here from those rows — for windows of whole days (read from the day
// rollups, a day with a change not folded yet from its rows), windows cutting days at either end (their partial
// days read from the rows) and windows inside one day — with changes not folded yet and once all are; and the
// migration's backfill makes the same day rows as the fold.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { noteChange } from '../../src/insights/rollup.js'
import { foldAll, foldBatch } from '../../src/insights/fold.js'
import type { InsightPhaseRunTable, InsightWaitTable } from '../../src/insights/insights.table.js'
import { backfillAgentDays } from '../../src/db/migrations/0125_insight_agent_days.js'
import { expectedFigures as expected, figuresOnly, random } from './expected.js'

const DAY = 86_400_000
const HOUR = 3_600_000
const usd = (value: number) => Math.round(value * 1e9) / 1e9

for (const dialect of dialects()) {
  describe(`day rollups (${dialect})`, () => {
    let app: FastifyInstance
    let workspaceId: string
    const agents = [randomUUID(), randomUUID(), randomUUID()]
    // Five whole UTC days ending at today's midnight, and today until now.
    const base = Math.floor(Date.now() / DAY) * DAY - 5 * DAY
    let rows: InsightPhaseRunTable[] = []
    const waits: InsightWaitTable[] = []

    before(async () => {
      // No fold of its own: the test folds when it means to.
      app = await build(dialect, { TANDEM_INSIGHTS_FOLD_MS: '0' })
      workspaceId = (await send(app, 'GET', '/api/me')).json().workspaceId
      const db = app.database.db
      const next = random(37)
      const span = Date.now() - base
      for (let i = 0; i < 120; i++) {
        const gated = next() < 0.7 ? 1 : 0
        const outcome = gated ? Math.floor(next() * 4) : -1 // 0 approved, 1 rejected, 2 expired, 3 still waiting
        const row: InsightPhaseRunTable = {
          phase_run_id: randomUUID(), workspace_id: workspaceId, agent_id: agents[i % 3]!, run_id: randomUUID(), stream_id: randomUUID(),
          cycle_id: randomUUID(), trigger_name: 't', phase_id: randomUUID(), phase_name: 'p', started_at: new Date(base + Math.floor(next() * span)).toISOString(),
          gated, answered: next() < 0.9 ? 1 : 0, approved: 0, revised: 0, rejected: 0, expired: 0, overridden: 0,
          tool_auto: Math.floor(next() * 3), tool_approved: 0, tool_denied: 0, tool_failed: 0, questions: 0,
          input_tokens: 100, output_tokens: 20, cost_usd: next() < 0.3 ? null : Math.floor(next() * 5000) * 1e-6, run_failed: next() < 0.05 ? 1 : 0,
        }
        await noteChange(db, row, 'none')
        await db.insertInto('insight_phase_runs').values(row).execute()
        // Now and then a small fold: some rows are then noted again with the row the summed rows counted.
        if (i % 7 === 3) await foldBatch(db, 3)
        // The engine rewrites the row as the phase moves: revises, its outcome, tool calls, a cost that grows.
        const moved: InsightPhaseRunTable = {
          ...row,
          revised: gated && next() < 0.3 ? 1 + Math.floor(next() * 2) : 0,
          approved: outcome === 0 ? 1 : 0, rejected: outcome === 1 ? 1 : 0, expired: outcome === 2 ? 1 : 0, overridden: outcome === 1 && next() < 0.5 ? 1 : 0,
          tool_approved: Math.floor(next() * 2), tool_denied: Math.floor(next() * 2), tool_failed: Math.floor(next() * 2), questions: Math.floor(next() * 2),
          input_tokens: 300, output_tokens: 60, cost_usd: next() < 0.2 ? null : Math.floor(next() * 9000) * 1e-6,
        }
        const { phase_run_id: _id, ...rest } = moved
        await noteChange(db, moved, 'row and waits')
        await db.updateTable('insight_phase_runs').set(rest).where('phase_run_id', '=', row.phase_run_id).execute()
        rows.push(moved)
        const ended = [...Array<'revised'>(moved.revised).fill('revised'), ...(outcome === 0 ? ['approved'] : outcome === 1 ? ['rejected'] : outcome === 2 ? ['expired'] : [])] as InsightWaitTable['outcome'][]
        for (const [seq, o] of ended.entries()) {
          const wait: InsightWaitTable = {
            phase_run_id: row.phase_run_id, seq, workspace_id: workspaceId, agent_id: row.agent_id, stream_id: row.stream_id, cycle_id: row.cycle_id,
            phase_id: row.phase_id, started_at: row.started_at, outcome: o, decision_ms: o === 'expired' ? null : Math.floor(next() * HOUR), ended_at: row.started_at,
          }
          await db.insertInto('insight_waits').values(wait).execute()
          waits.push(wait)
        }
        // A fold after the waits (the engine writes a wait row in the transaction that notes its phase run).
        if (next() < 0.1) await foldBatch(db, 2)
      }
      rows = rows.sort((a, b) => (a.started_at < b.started_at ? -1 : 1))
      assert.ok(new Set(rows.map((r) => r.started_at.slice(0, 10))).size >= 5, 'rows on several days')
    })
    after(async () => app.close())

    const iso = (ms: number) => new Date(ms).toISOString()
    const inWindow = <T extends { started_at: string; agent_id: string }>(items: T[], from: number, to: number, agentId?: string) =>
      items.filter((x) => x.started_at >= iso(from) && x.started_at < iso(to) && (agentId === undefined || x.agent_id === agentId))
    const windows: Array<[string, number, number]> = [
      ['whole days', base, base + 5 * DAY],
      ['cut at both ends', base + 7 * HOUR + 123, base + 4 * DAY + 17 * HOUR + 5],
      ['cut at the start, until now', base + DAY / 2, Date.now() + 1],
      ['whole days and today so far', base, Date.now() + 1],
      ['inside one day', base + 2 * DAY + 3 * HOUR, base + 2 * DAY + 20 * HOUR],
      ['across one midnight, no whole day', base + 2 * DAY + 20 * HOUR, base + 3 * DAY + 4 * HOUR],
    ]

    const notes = async () => Number((await app.database.db.selectFrom('insight_unfolded').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)
    const dayRows = async () => Number((await app.database.db.selectFrom('insight_agent_days').select((eb) => eb.fn.countAll().as('n')).where('phase_runs', '>', 0).executeTakeFirstOrThrow()).n)

    async function checkList() {
      for (const [name, from, to] of windows) {
        const res = await send(app, 'GET', `/api/insights/agents?from=${iso(from)}&to=${iso(to)}`)
        assert.equal(res.statusCode, 200, res.body)
        const data = res.json().data as Array<Record<string, unknown>>
        const present = agents.filter((a) => inWindow(rows, from, to, a).length > 0)
        assert.deepEqual(data.map((r) => r.agentId).sort(), [...present].sort(), name)
        for (const row of data) {
          const agentId = row.agentId as string
          assert.deepEqual(figuresOnly(row), expected(inWindow(rows, from, to, agentId), inWindow(waits, from, to, agentId)), `${name}, ${agentId}`)
        }
      }
    }

    async function checkDetail() {
      const agentId = agents[1]!
      for (const [name, from, to] of windows.filter(([, f, t]) => t - f > 72 * HOUR)) {
        const res = await send(app, 'GET', `/api/insights/agents/${agentId}?from=${iso(from)}&to=${iso(to)}&bucket=day`)
        assert.equal(res.statusCode, 200, res.body)
        const body = res.json()
        assert.deepEqual(figuresOnly(body.agent), expected(inWindow(rows, from, to, agentId), inWindow(waits, from, to, agentId)), name)
        for (const bucket of body.series) {
          // A bucket holds the counted phase runs started in it, within the window.
          const start = Math.max(from, Date.parse(bucket.start))
          const end = Math.min(to, Date.parse(bucket.end))
          assert.deepEqual(figuresOnly(bucket), expected(inWindow(rows, start, end, agentId), inWindow(waits, start, end, agentId)), `${name}, ${bucket.start}`)
        }
      }
    }

    it('the list and the detail, with some changes not folded yet: every figure as computed from the rows, whatever days the window cuts', async () => {
      // Both kinds of day are there: some summed and noted again since, some summed and not.
      assert.ok((await notes()) > 10, `${await notes()} notes`)
      assert.ok((await dayRows()) > 5, `${await dayRows()} day rows`)
      await checkList()
      await checkDetail()
    })

    it('the list and the detail once every change is folded (by three folds at once): the same figures, from the day rows', async () => {
      // On PostgreSQL they run at once on three connections, each skipping the notes another holds: none is added twice.
      const db = app.database.db
      await Promise.all([foldAll(db), foldBatch(db, 7), foldAll(db)])
      assert.equal(await notes(), 0)
      await checkList()
      await checkDetail()
    })

    it('the backfill makes the same day rows as the fold', async () => {
      const db = app.database.db
      const read = async () =>
        (await db.selectFrom('insight_agent_days').selectAll().orderBy('agent_id').orderBy('day').execute()).map(({ decision_samples, cost, gated_cost, ...sums }) => ({
          ...sums,
          input_tokens: Number(sums.input_tokens),
          output_tokens: Number(sums.output_tokens),
          cost: usd(cost),
          gated_cost: usd(gated_cost),
          samples: decision_samples.split(',').slice(0, -1).map(Number).sort((a, b) => a - b),
        }))
      await foldAll(db)
      const engine = await read()
      assert.equal(engine.length > 10, true, `${engine.length} day rows`)
      await backfillAgentDays(db)
      assert.deepEqual(await read(), engine)
    })
  })
}
