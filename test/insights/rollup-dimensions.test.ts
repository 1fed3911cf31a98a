// The hour and stream-or-cycle rollups (docs/insights.md) on both databases: a varied history of per-phase-run and
// wait rows over several days, in two streams of two cycles each, written and rewritten with the engine's own
// notes and folded now and then (in the first part, a phase run moving to another hour or agent too, all folded
// before any reading: the engine never moves one, the fold still takes it out of its old rows), gives lists filtered by stream, by cycle and by both,
// hourly and daily series (filtered or not), the breakdown and the detail's row exactly the figures computed here
// from those rows, whatever periods the window cuts, with changes not folded yet and once all are; the
// migration's backfill makes the same rollup rows as the fold; and the engine, moving real runs, leaves notes from
// which the fold makes the same rows as the backfill makes from its own.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { createAgent, createStream } from '../runs/setup.js'
import { noteChange } from '../../src/insights/rollup.js'
import { foldAll, foldBatch } from '../../src/insights/fold.js'
import type { InsightPhaseRunTable, InsightWaitTable } from '../../src/insights/insights.table.js'
import { backfillRollupDimensions } from '../../src/db/migrations/0137_insight_rollup_dimensions.js'
import { expectedFigures, figuresOnly, random } from './expected.js'
import { buildHistory } from './history.js'

const DAY = 86_400_000
const HOUR = 3_600_000
const usd = (value: number) => Math.round(value * 1e9) / 1e9
const iso = (ms: number) => new Date(ms).toISOString()

/** Every row of a summed rollup, comparable: keys, sums (cost rounded), decision samples sorted. */
async function rollupRows(app: FastifyInstance, table: 'insight_agent_hours' | 'insight_scope_days') {
  const rows = (await app.database.db.selectFrom(table).selectAll().execute()) as Array<Record<string, unknown>>
  return rows
    .filter((row) => Number(row.phase_runs) !== 0)
    .map(({ decision_samples, cost, gated_cost, input_tokens, output_tokens, ...rest }) => ({
      ...rest,
      input_tokens: Number(input_tokens),
      output_tokens: Number(output_tokens),
      cost: usd(Number(cost)),
      gated_cost: usd(Number(gated_cost)),
      samples: String(decision_samples).split(',').slice(0, -1).map(Number).sort((a, b) => a - b),
    }))
    .sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1))
}

for (const dialect of dialects()) {
  describe(`hour and stream-or-cycle rollups (${dialect})`, () => {
    let app: FastifyInstance
    let workspaceId: string
    let agents: string[] = []
    const streams: string[] = []
    const cycles: Array<{ id: string; streamId: string; phases: string[] }> = []
    const base = Math.floor(Date.now() / DAY) * DAY - 5 * DAY
    let rows: InsightPhaseRunTable[] = []
    const waits: InsightWaitTable[] = []

    before(async () => {
      // No fold of its own: the test folds when it means to.
      app = await build(dialect, { TANDEM_INSIGHTS_FOLD_MS: '0' })
      workspaceId = (await send(app, 'GET', '/api/me')).json().workspaceId
      agents = [await createAgent(app, { name: 'A' }), await createAgent(app, { name: 'B' }), await createAgent(app, { name: 'C' })]
      for (const name of ['Docs', 'Billing']) streams.push(await createStream(app, name))
      for (let i = 0; i < 4; i++) {
        const streamId = streams[i % 2]!
        const phases = [randomUUID(), randomUUID()]
        const phasesTemplate = phases.map((id, p) => ({ id, agentId: agents[p]!, goal: 'g', instructions: 'i', autoAdvance: false, phaseName: `p${p}`, operatorPool: ['maria'] }))
        const res = await send(app, 'POST', `/api/cycles/streams/${streamId}/cycles`, { triggerName: `t${i}`, description: 'd', phasesTemplate })
        assert.equal(res.statusCode, 201, res.body)
        cycles.push({ id: res.json().id, streamId, phases })
      }
      const db = app.database.db
      const next = random(137)
      const span = Date.now() - base
      for (let i = 0; i < 160; i++) {
        const cycle = cycles[Math.floor(next() * cycles.length)]!
        const gated = next() < 0.7 ? 1 : 0
        const outcome = gated ? Math.floor(next() * 4) : -1 // 0 approved, 1 rejected, 2 expired, 3 still waiting
        const row: InsightPhaseRunTable = {
          phase_run_id: randomUUID(), workspace_id: workspaceId, agent_id: agents[i % 3]!, run_id: randomUUID(), stream_id: cycle.streamId,
          cycle_id: cycle.id, trigger_name: 't', phase_id: cycle.phases[i % 2]!, phase_name: `p${i % 2}`, started_at: iso(base + Math.floor(next() * span)),
          gated, answered: next() < 0.9 ? 1 : 0, approved: 0, revised: 0, rejected: 0, expired: 0, overridden: 0,
          tool_auto: Math.floor(next() * 3), tool_approved: 0, tool_denied: 0, tool_failed: 0, questions: 0,
          input_tokens: 100, output_tokens: 20, cost_usd: next() < 0.3 ? null : Math.floor(next() * 5000) * 1e-6, run_failed: next() < 0.05 ? 1 : 0,
        }
        await noteChange(db, row, 'none')
        await db.insertInto('insight_phase_runs').values(row).execute()
        if (i % 9 === 4) await foldBatch(db, 6)
        // The engine rewrites the row as the phase moves; a few move to another hour or agent, which takes their
        // sums out of the rollup rows they were in.
        const elsewhere = i < 60 && next() < 0.15
        const moved: InsightPhaseRunTable = {
          ...row,
          started_at: elsewhere ? iso(Math.min(Date.now() - 1, Date.parse(row.started_at) + HOUR + Math.floor(next() * HOUR))) : row.started_at,
          agent_id: elsewhere && next() < 0.5 ? agents[(i + 1) % 3]! : row.agent_id,
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
            phase_run_id: row.phase_run_id, seq, workspace_id: workspaceId, agent_id: moved.agent_id, stream_id: row.stream_id, cycle_id: row.cycle_id,
            phase_id: row.phase_id, started_at: moved.started_at, outcome: o, decision_ms: o === 'expired' ? null : Math.floor(next() * HOUR), ended_at: moved.started_at,
          }
          await db.insertInto('insight_waits').values(wait).execute()
          waits.push(wait)
        }
        // The moves are folded before any reading (the engine never moves a phase run's keys).
        if (i === 60) await foldAll(db)
      }
      rows = rows.sort((a, b) => (a.started_at < b.started_at ? -1 : 1))
      assert.ok(rows.some((r) => r.started_at.slice(0, 13) !== rows[0]!.started_at.slice(0, 13)), 'rows in several hours')
    })
    after(async () => app.close())

    type Filter = { streamId?: string; cycleId?: string }
    const matches = (x: { started_at: string; agent_id: string; stream_id: string; cycle_id: string }, from: number, to: number, filter: Filter, agentId?: string) =>
      x.started_at >= iso(from) && x.started_at < iso(to) && (agentId === undefined || x.agent_id === agentId) &&
      (filter.streamId === undefined || x.stream_id === filter.streamId) && (filter.cycleId === undefined || x.cycle_id === filter.cycleId)
    const expected = (from: number, to: number, filter: Filter, agentId?: string, more: (x: { cycle_id: string; phase_id: string }) => boolean = () => true) =>
      expectedFigures(rows.filter((r) => matches(r, from, to, filter, agentId) && more(r)), waits.filter((w) => matches(w, from, to, filter, agentId) && more(w)))
    const query = (from: number, to: number, filter: Filter) =>
      `from=${iso(from)}&to=${iso(to)}${filter.streamId ? `&streamId=${filter.streamId}` : ''}${filter.cycleId ? `&cycleId=${filter.cycleId}` : ''}`
    const windows = (): Array<[string, number, number]> => [
      ['whole days', base, base + 5 * DAY],
      ['cut at both ends', base + 7 * HOUR + 123, base + 4 * DAY + 17 * HOUR + 5],
      ['whole days and today so far', base, Date.now() + 1],
      ['inside one day, cutting hours', base + 2 * DAY + 3 * HOUR + 59_000, base + 2 * DAY + 20 * HOUR + 1],
      ['across one midnight, no whole day', base + 2 * DAY + 20 * HOUR, base + 3 * DAY + 4 * HOUR],
    ]
    const filters = (): Array<[string, Filter]> => [
      ['no filter', {}],
      ['a stream', { streamId: streams[0] }],
      ['the other stream', { streamId: streams[1] }],
      ['a cycle', { cycleId: cycles[1]!.id }],
      ['a stream and its cycle', { streamId: streams[0], cycleId: cycles[2]!.id }],
      ['a stream and a cycle of the other', { streamId: streams[0], cycleId: cycles[1]!.id }],
    ]

    const notes = async () => Number((await app.database.db.selectFrom('insight_unfolded').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)

    async function checkLists() {
      for (const [window, from, to] of windows()) {
        for (const [name, filter] of filters()) {
          const res = await send(app, 'GET', `/api/insights/agents?${query(from, to, filter)}`)
          assert.equal(res.statusCode, 200, res.body)
          const data = res.json().data as Array<Record<string, unknown>>
          const present = agents.filter((a) => rows.some((r) => matches(r, from, to, filter, a)))
          assert.deepEqual(data.map((r) => r.agentId).sort(), [...present].sort(), `${window}, ${name}`)
          for (const row of data) assert.deepEqual(figuresOnly(row), expected(from, to, filter, row.agentId as string), `${window}, ${name}, ${row.agentId}`)
        }
      }
      const none = await send(app, 'GET', `/api/insights/agents?${query(base, Date.now() + 1, { streamId: streams[0], cycleId: cycles[1]!.id })}`)
      assert.deepEqual(none.json().data, [], 'a cycle of another stream: nothing')
    }

    async function checkDetails() {
      let buckets = 0
      for (const agentId of agents) {
        for (const [window, from, to] of windows()) {
          for (const [name, filter] of filters()) {
            for (const bucket of ['hour', 'day']) {
              const res = await send(app, 'GET', `/api/insights/agents/${agentId}?${query(from, to, filter)}&bucket=${bucket}`)
              assert.equal(res.statusCode, 200, res.body)
              const body = res.json()
              const what = `${agentId}, ${window}, ${name}, ${bucket}`
              assert.deepEqual(figuresOnly(body.agent), expected(from, to, filter, agentId), what)
              for (const point of body.series) {
                const start = Math.max(from, Date.parse(point.start))
                const end = Math.min(to, Date.parse(point.end))
                assert.deepEqual(figuresOnly(point), expected(start, end, filter, agentId), `${what}, ${point.start}`)
                buckets += point.phasesAnswered > 0 ? 1 : 0
              }
              const pairs = [...new Set(rows.filter((r) => matches(r, from, to, filter, agentId)).map((r) => `${r.cycle_id}/${r.phase_id}`))]
              assert.equal(body.breakdown.length, pairs.length, what)
              for (const part of body.breakdown) {
                assert.deepEqual(figuresOnly(part), expected(from, to, filter, agentId, (x) => x.cycle_id === part.cycleId && x.phase_id === part.phaseId), `${what}, ${part.cycleId}`)
              }
            }
          }
        }
      }
      assert.ok(buckets > 100, `${buckets} buckets with answers`)
    }

    it('lists filtered by stream, cycle or both, and the detail, with some changes not folded yet: every figure as computed from the rows', async () => {
      assert.ok((await notes()) > 30, `${await notes()} notes`)
      await checkLists()
      await checkDetails()
    })

    it('the same once every change is folded, from the summed rows', async () => {
      await foldAll(app.database.db)
      assert.equal(await notes(), 0)
      await checkLists()
      await checkDetails()
    })

    it('the backfill makes the same hour and stream-or-cycle rows as the fold', async () => {
      await foldAll(app.database.db)
      const engine = { hours: await rollupRows(app, 'insight_agent_hours'), scopes: await rollupRows(app, 'insight_scope_days') }
      assert.ok(engine.hours.length > 50 && engine.scopes.length > 30, `${engine.hours.length} hour rows, ${engine.scopes.length} scope rows`)
      await backfillRollupDimensions(app.database.db)
      assert.deepEqual({ hours: await rollupRows(app, 'insight_agent_hours'), scopes: await rollupRows(app, 'insight_scope_days') }, engine)
    })
  })

  describe(`hour and stream-or-cycle rollups kept by the engine (${dialect})`, () => {
    let app: FastifyInstance
    before(async () => {
      app = await build(dialect, { TANDEM_INSIGHTS_FOLD_MS: '0' })
      await buildHistory(app)
    })
    after(async () => app.close())

    it('moving real runs (a quorum, revise → approve, a reject, an expiry, a cancel, a failure, tool calls) leaves notes the fold makes the backfill\'s rows of', async () => {
      const db = app.database.db
      assert.ok(Number((await db.selectFrom('insight_unfolded').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n) > 0, 'the runs left notes')
      await foldAll(db)
      const engine = { hours: await rollupRows(app, 'insight_agent_hours'), scopes: await rollupRows(app, 'insight_scope_days') }
      assert.ok(engine.hours.length >= 2 && engine.scopes.length >= 4, `${engine.hours.length} hour rows, ${engine.scopes.length} scope rows`)
      await backfillRollupDimensions(app.database.db)
      assert.deepEqual({ hours: await rollupRows(app, 'insight_agent_hours'), scopes: await rollupRows(app, 'insight_scope_days') }, engine)
    })
  })
}
