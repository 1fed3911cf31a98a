// Many runs of one agent on one stream at once, on both databases: every start is a 201, every run ends, and
// each phase's answer is posted once (on PostgreSQL two transactions that took the rows they share in different
// orders would deadlock, 40P01, and the request that starts a run would answer 500). The scorecards' fold runs every
// 10 ms meanwhile, taking the runs' notes as they come (on PostgreSQL skipping those a run's transaction holds):
// once it has taken the last, the summed rollups are what the migrations' backfill makes from the per-phase-run rows.
// (A fold of the test's own would skip a note the app's fold holds, and could end before that fold commits: the
// test waits for the app's fold to have taken every note instead.)
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { startAgentServer, type AgentServer } from './agent-server.js'
import { createAgent, createCycle, createStream, runIn } from './setup.js'
import { waitFor } from '../wait.js'
import { backfillAgentDays } from '../../src/db/migrations/0125_insight_agent_days.js'
import { backfillRollupDimensions } from '../../src/db/migrations/0137_insight_rollup_dimensions.js'

const CLIENTS = 32
const RUNS = 128
const usd = (value: number | null) => (value === null ? null : Math.round(Number(value) * 1e9) / 1e9)

for (const dialect of dialects()) {
  describe(`concurrent runs of one agent on one stream (${dialect})`, () => {
    let app: FastifyInstance
    let agent: AgentServer

    before(async () => {
      app = await build(dialect, { TANDEM_WORKERS: '8', TANDEM_EGRESS_ALLOW: '127.0.0.0/8', TANDEM_INSIGHTS_FOLD_MS: '10' })
      agent = await startAgentServer()
    })
    after(async () => {
      await app.close()
      await agent.close()
    })

    it(`${RUNS} runs started by ${CLIENTS} clients at once all start, and each ends with every phase answered once`, async () => {
      const agentId = await createAgent(app, { endpointUrl: agent.url })
      const streamId = await createStream(app)
      const cycleId = await createCycle(app, streamId, [{ agentId }, { agentId }])
      // CLIENTS at once, each starting its share of the runs one after the other while the others' runs advance.
      const starts = (
        await Promise.all(
          Array.from({ length: CLIENTS }, async (_, client) => {
            const mine = []
            for (let i = client; i < RUNS; i += CLIENTS) mine.push(await send(app, 'POST', `/api/cycles/streams/${streamId}/cycles/${cycleId}/runs`, { input: { ticket: i } }))
            return mine
          }),
        )
      ).flat()
      assert.deepEqual(starts.map((r) => r.statusCode), Array(RUNS).fill(201), starts.find((r) => r.statusCode !== 201)?.body)
      const ids: string[] = starts.map((r) => r.json().id)
      const ended = await Promise.all(ids.map((id) => runIn(app, id, ['succeeded', 'failed'], 60000)))
      assert.deepEqual(ended.map((r) => r.status), Array(RUNS).fill('succeeded'))
      for (const id of ids) assert.equal(agent.deliveries.filter((d) => d.body.run.id === id).length, 2, `run ${id}: one delivery per phase`)
      let answers = 0
      for (let cursor: string | null = ''; cursor !== null; ) {
        const page = await send(app, 'GET', `/api/chat/streams/${streamId}/messages?limit=100${cursor ? `&cursor=${cursor}` : ''}`)
        assert.equal(page.statusCode, 200, page.body)
        answers += page.json().data.filter((m: { authorType: string }) => m.authorType === 'agent').length
        cursor = page.json().nextCursor
      }
      assert.equal(answers, RUNS * 2, 'one message per phase')

      const db = app.database.db
      const during = await db.selectFrom('insight_agent_days').select('phase_runs').execute()
      assert.ok(during.some((row) => row.phase_runs > 0), 'the fold ran while the runs did')
      const unfolded = async () => Number((await db.selectFrom('insight_unfolded').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)
      await waitFor(async () => (await unfolded()) === 0, { what: "the app's fold to take every note", timeoutMs: 30_000 })
      const rows = await db.selectFrom('insight_phase_runs').select(['answered', 'gated']).execute()
      assert.deepEqual(rows.map((row) => [Number(row.answered), Number(row.gated)]), Array(RUNS * 2).fill([1, 0]), 'one row per phase run, answered')
      const sums = async () => {
        const read = async (table: 'insight_agent_days' | 'insight_agent_hours' | 'insight_scope_days') =>
          (await db.selectFrom(table).selectAll().execute())
            .filter((row) => Number(row.phase_runs) !== 0)
            .map(({ cost, gated_cost, decision_samples, ...row }) =>
              JSON.stringify(Object.fromEntries([...Object.entries(row).map(([k, v]) => [k, typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v]), ['cost', usd(cost)], ['gatedCost', usd(gated_cost)], ['samples', decision_samples.length]])),
            )
            .sort()
        return { days: await read('insight_agent_days'), hours: await read('insight_agent_hours'), scopes: await read('insight_scope_days') }
      }
      const folded = await sums()
      const total = (rows: string[], figure: string) => rows.reduce((n, row) => n + Number((JSON.parse(row) as Record<string, number>)[figure]), 0)
      assert.deepEqual([total(folded.days, 'phase_runs'), total(folded.days, 'answered')], [RUNS * 2, RUNS * 2], 'every phase run counted once, answered')
      await backfillAgentDays(db)
      await backfillRollupDimensions(db)
      assert.deepEqual(await sums(), folded, 'the summed rows are what the backfill makes of the per-phase-run rows')
    })
  })
}
