// The scorecards (docs/insights.md) on both databases against a history built through the API: every figure of
// the list and the detail, the windows, sorts and filters, the 400s and 404s, the CSV, the scoping (workspaces,
// agent keys), and the backfill migration giving the same figures from the stored runs.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, pointers, send } from '../helpers.js'
import { keyFor } from '../schedules/setup.js'
import { buildHistory, nearestRank, type History } from './history.js'
import { backfillInsights } from '../../src/db/migrations/0095_insights.js'
import { foldAll } from '../../src/insights/fold.js'
import { backfillAgentDays } from '../../src/db/migrations/0125_insight_agent_days.js'
import { backfillRollupDimensions } from '../../src/db/migrations/0137_insight_rollup_dimensions.js'

const close = (actual: number | null, expected: number) => assert.ok(actual !== null && Math.abs(actual - expected) < 1e-12, `${actual} ≈ ${expected}`)

for (const dialect of dialects()) {
  describe(`scorecards (${dialect})`, () => {
    let app: FastifyInstance
    let h: History
    const window = () => `from=${new Date(Date.now() - 3600_000).toISOString()}&to=${new Date(Date.now() + 3600_000).toISOString()}`
    before(async () => {
      // No fold of its own: its figures come from the notes (every change unfolded) until a test folds them.
      app = await build(dialect, { TANDEM_INSIGHTS_FOLD_MS: '0' })
      h = await buildHistory(app)
    })
    after(async () => app.close())

    const list = async (query = '', headers: Record<string, string> = {}) => send(app, 'GET', `/api/insights/agents?${query}`, undefined, headers)

    it('a row per agent with every figure as defined', async () => {
      const res = await list()
      assert.equal(res.statusCode, 200, res.body)
      const { data, window: w, nextCursor } = res.json()
      assert.equal(nextCursor, null)
      assert.equal(Date.parse(w.to) - Date.parse(w.from), 30 * 86400_000)
      assert.deepEqual(data.map((r: any) => r.agentId), [h.writerId, h.reviewerId], 'by phasesAnswered, desc')
      const writer = data[0]
      assert.equal(writer.agentName, 'Writer')
      assert.equal(writer.providerType, 'custom_token_only')
      assert.equal(writer.phasesAnswered, 6, 'every phase run with an output (not the failed one)')
      assert.deepEqual(writer.decisions, { approved: 2, revised: 1, rejected: 1, expired: 1, overridden: 1 })
      close(writer.firstPassApprovalRate, 1 / 3)
      close(writer.revisionsPerApprovedOutput, 1 / 2)
      assert.equal(h.writerTimes.length, 4)
      assert.deepEqual(writer.decisionTimeMs, { median: nearestRank(h.writerTimes, 50), p90: nearestRank(h.writerTimes, 90), samples: 4 })
      assert.deepEqual(writer.toolCalls, { autoRun: 2, approved: 1, denied: 1, failed: 1 })
      assert.equal(writer.questionsAsked, 1)
      assert.deepEqual(writer.usage, { inputTokens: 700, outputTokens: 140 }, 'seven answers with usage')
      close(writer.costUsd, 0.00098)
      close(writer.costPerApprovedOutput, 0.00084 / 2)
      assert.equal(writer.runsFailed, 1)
      const reviewer = data[1]
      assert.equal(reviewer.phasesAnswered, 1)
      assert.deepEqual(reviewer.decisions, { approved: 1, revised: 0, rejected: 0, expired: 0, overridden: 0 })
      assert.equal(reviewer.firstPassApprovalRate, 1)
      assert.equal(reviewer.revisionsPerApprovedOutput, 0)
      assert.equal(reviewer.costUsd, null, 'nothing priced')
      assert.equal(reviewer.costPerApprovedOutput, null)
      assert.deepEqual(reviewer.usage, { inputTokens: 0, outputTokens: 0 })
    })

    it('sorts by any figure, nulls last either way, ties by agentId; pages with a cursor', async () => {
      const asc = (await list('sort=costUsd&order=asc')).json().data
      assert.deepEqual(asc.map((r: any) => r.agentId), [h.writerId, h.reviewerId], 'null cost last in asc too')
      const desc = (await list('sort=decisions.approved')).json().data
      assert.deepEqual(desc.map((r: any) => r.agentId), [h.writerId, h.reviewerId])
      const ties = (await list('sort=decisions.overridden&order=asc')).json().data
      assert.deepEqual(ties.map((r: any) => r.agentId), [h.reviewerId, h.writerId])
      const first = (await list('limit=1')).json()
      assert.equal(first.data.length, 1)
      const second = (await list(`limit=1&cursor=${first.nextCursor}`)).json()
      assert.deepEqual(second.data.map((r: any) => r.agentId), [h.reviewerId])
      assert.equal(second.nextCursor, null)
    })

    it('filters by stream and cycle; an unknown one is a 404; bad windows, sorts and ids are 400s with pointers', async () => {
      assert.deepEqual((await list(`streamId=${h.otherStreamId}`)).json().data.map((r: any) => r.agentId), [h.reviewerId])
      const byCycle = (await list(`cycleId=${h.cycles.b}`)).json().data
      assert.deepEqual(byCycle.map((r: any) => [r.agentId, r.decisions.expired, r.phasesAnswered]), [[h.writerId, 1, 1]])
      assert.equal((await list('streamId=0190b0c4-3a5e-7bcd-8f00-000000000001')).statusCode, 404)
      assert.equal((await list('cycleId=0190b0c4-3a5e-7bcd-8f00-000000000001')).statusCode, 404)
      const past = (await list('from=2020-01-01T00:00:00.000Z&to=2020-01-02T00:00:00.000Z')).json()
      assert.deepEqual(past.data, [])
      const backwards = await list('from=2026-01-02T00:00:00.000Z&to=2026-01-01T00:00:00.000Z')
      assert.equal(backwards.statusCode, 400)
      assert.deepEqual(pointers(backwards), ['/query/from'])
      const long = await list('from=2024-01-01T00:00:00.000Z&to=2025-01-02T00:00:00.000Z')
      assert.deepEqual(pointers(long), ['/query/to'])
      assert.equal((await list('from=2024-01-01T00:00:00.000Z&to=2025-01-01T00:00:00.000Z')).statusCode, 200, '366 days')
      const bad = await list('sort=agentName&order=up&limit=0&streamId=nope&cursor=zzz')
      assert.equal(bad.statusCode, 400)
      for (const p of ['/query/sort', '/query/order', '/query/limit', '/query/streamId']) assert.ok(pointers(bad).includes(p), `${p} in ${pointers(bad)}`)
      assert.deepEqual(pointers(await list('cursor=zzz')), ['/query/cursor'])
    })

    it('the detail: the row, an hourly series whose buckets sum to it, the breakdown per cycle and phase', async () => {
      const res = await send(app, 'GET', `/api/insights/agents/${h.writerId}?${window()}`)
      assert.equal(res.statusCode, 200, res.body)
      const detail = res.json()
      assert.equal(detail.window.bucket, 'hour')
      assert.ok(detail.series.length >= 2 && detail.series.length <= 3)
      assert.equal(detail.series[0].start, new Date(Math.floor(Date.parse(detail.window.from) / 3600_000) * 3600_000).toISOString())
      const sum = (pick: (x: any) => number) => detail.series.reduce((acc: number, p: any) => acc + pick(p), 0)
      assert.equal(sum((p) => p.phasesAnswered), 6)
      assert.equal(sum((p) => p.decisions.approved), 2)
      assert.equal(sum((p) => p.decisionTimeMs.samples), 4)
      assert.ok(detail.series.some((p: any) => p.phasesAnswered === 0 && p.firstPassApprovalRate === null) || detail.series.length === 2)
      assert.equal(detail.agent.phasesAnswered, 6)
      assert.deepEqual(detail.breakdown.map((b: any) => [b.cycleId, b.phaseId, b.phasesAnswered]), [
        [h.cycles.a, h.phaseIds.a, 4],
        ...[[h.cycles.b, h.phaseIds.b, 1], [h.cycles.c, h.phaseIds.c, 1]].sort((x, y) => (x[0]! < y[0]! ? -1 : 1)),
      ])
      const a = detail.breakdown[0]
      assert.equal(a.triggerName, 'write')
      assert.equal(a.phaseName, 'write phase')
      assert.deepEqual(a.decisions, { approved: 2, revised: 1, rejected: 1, expired: 0, overridden: 1 })
      const days = (await send(app, 'GET', `/api/insights/agents/${h.writerId}`)).json()
      assert.equal(days.window.bucket, 'day')
      assert.ok(days.series.length === 30 || days.series.length === 31)
      const tooMany = await send(app, 'GET', `/api/insights/agents/${h.writerId}?bucket=hour&from=${new Date(Date.now() - 60 * 86400_000).toISOString()}`)
      assert.deepEqual(pointers(tooMany), ['/query/bucket'])
      assert.equal((await send(app, 'GET', '/api/insights/agents/0190b0c4-3a5e-7bcd-8f00-000000000001')).statusCode, 404)
      assert.deepEqual(pointers(await send(app, 'GET', '/api/insights/agents/nope')), ['/path/agentId'])
    })

    it('CSV: all rows, RFC 4180, the exact header, formula cells guarded; the detail\'s series', async () => {
      const res = await list('limit=1', { accept: 'text/csv' })
      assert.equal(res.statusCode, 200, res.body)
      assert.equal(res.headers['content-type'], 'text/csv; charset=utf-8')
      assert.match(String(res.headers['content-disposition']), /^attachment/)
      const lines = res.body.split('\r\n')
      assert.equal(lines[0], 'agentId,agentName,providerType,phasesAnswered,approved,revised,rejected,expired,overridden,firstPassApprovalRate,revisionsPerApprovedOutput,decisionTimeMedianMs,decisionTimeP90Ms,decisionTimeSamples,toolCallsAutoRun,toolCallsApproved,toolCallsDenied,toolCallsFailed,questionsAsked,inputTokens,outputTokens,costUsd,costPerApprovedOutput,runsFailed')
      assert.equal(lines.length, 4, 'two rows whatever the limit, and the final CRLF')
      assert.equal(lines[3], '')
      assert.ok(lines[1]!.startsWith(`${h.writerId},Writer,custom_token_only,6,2,1,1,1,1,`))
      assert.ok(lines[2]!.startsWith(`${h.reviewerId},"'=HYPERLINK(""http://x"")",custom_token_only,1,1,0,0,0,0,1,0,`), lines[2])
      assert.ok(lines[2]!.endsWith(',0,0,,,0'), 'nulls empty')
      const series = await send(app, 'GET', `/api/insights/agents/${h.writerId}?${window()}`, undefined, { accept: 'text/csv' })
      const rows = series.body.split('\r\n')
      assert.ok(rows[0]!.startsWith('start,end,phasesAnswered,approved,'))
      assert.ok(rows.length >= 4)
    })

    it('scoping: another workspace sees nothing of this one; agent keys are refused', async () => {
      const stranger = await keyFor(app, 'stranger', 'admin', 'elsewhere')
      assert.deepEqual((await list('', stranger)).json().data, [])
      assert.equal((await send(app, 'GET', `/api/insights/agents/${h.writerId}`, undefined, stranger)).statusCode, 404)
      assert.equal((await list(`streamId=${h.streamId}`, stranger)).statusCode, 404)
      assert.equal((await list('', h.writerKey)).statusCode, 403)
      assert.equal((await list('', h.maria)).statusCode, 200, 'members read scorecards')
    })

    it('metrics: decisions by agent, decision and who; ended waits by kind and outcome; waits open now', async () => {
      const text = (await send(app, 'GET', '/metrics')).body
      const value = (series: string) => Number(new RegExp(`^${series.replace(/[{}"]/g, (c) => `\\${c}`)} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN)
      const w = h.writerId
      assert.equal(value(`tandem_decisions_total{agent_id="${w}",decision="approve",by="person"}`), 5)
      assert.equal(value(`tandem_decisions_total{agent_id="${w}",decision="revise",by="person"}`), 1)
      assert.equal(value(`tandem_decisions_total{agent_id="${w}",decision="reject",by="override"}`), 1)
      assert.equal(value(`tandem_decisions_total{agent_id="${w}",decision="approve",by="expiry"}`), 1)
      assert.equal(value(`tandem_decisions_total{agent_id="${h.reviewerId}",decision="approve",by="person"}`), 1)
      for (const [outcome, n] of [['approve', 3], ['revise', 1], ['reject', 1], ['expire', 1], ['cancel', 1]] as const) {
        assert.equal(value(`tandem_wait_duration_seconds_count{kind="decision",outcome="${outcome}"}`), n, outcome)
      }
      assert.equal(value('tandem_waiting{kind="decision"}'), 0)
      // The fold's backlog: this file's app folds only when told to.
      const unfolded = Number((await app.database.db.selectFrom('insight_unfolded').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)
      assert.ok(unfolded > 0)
      assert.equal(value('tandem_scorecard_changes_unfolded'), unfolded)
      await foldAll(app.database.db)
      assert.equal(Number(/^tandem_scorecard_changes_unfolded (\S+)$/m.exec((await send(app, 'GET', '/metrics')).body)?.[1]), 0)
    })

    it('the backfill gives the same figures from the stored runs', async () => {
      const before = (await list()).json().data
      // Every rollup row gone (the summed ones and the notes too, folded or not by now), then the migrations' fills.
      const db = app.database.db
      for (const table of ['insight_waits', 'insight_phase_runs', 'insight_unfolded', 'insight_agent_days', 'insight_agent_hours', 'insight_scope_days'] as const) await db.deleteFrom(table).execute()
      assert.deepEqual((await list()).json().data, [])
      await backfillInsights(db)
      await backfillAgentDays(db)
      await backfillRollupDimensions(db)
      const after = (await list()).json().data
      const strip = (rows: any[]) => rows.map(({ decisionTimeMs, ...rest }) => ({ ...rest, samples: decisionTimeMs.samples }))
      assert.deepEqual(strip(after), strip(before))
      // A wait's start is the answering task's close: close to the engine's own.
      assert.ok(Math.abs(after[0].decisionTimeMs.median - before[0].decisionTimeMs.median) < 2000, `${after[0].decisionTimeMs.median} vs ${before[0].decisionTimeMs.median}`)
    })
  })
}
