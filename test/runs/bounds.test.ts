// Bounded documents and events (docs/runs-and-events.md "Events"): 50 revises with maximal notes and long
// answers keep every event within 64 KiB, run.updated carries the summary (no goals, instructions or decision
// history), the run document stays bounded (≤ 50 attempts), and what the database stores grows linearly: the
// last ten revises add no more than 1.5 × the first ten, and each revise under 200 KB of rows. A 51st attempt
// is a 422 too-many-attempts; `input` is bounded at 64 KiB and a note at 4,000 characters (400 with a pointer).
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { sql } from 'kysely'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { startAgentServer, waitFor, type AgentServer } from './agent-server.js'
import { createAgent, createCycle, createStream, getRun, runIn } from './setup.js'

const NOTE = 'n'.repeat(4000)
const ANSWER = 'a'.repeat(30000)
const EVENT_LIMIT = 64 * 1024
const PER_REVISE_BOUND = 200 * 1024

for (const dialect of dialects()) {
  describe(`bounded runs and events (${dialect})`, () => {
    let app: FastifyInstance
    let server: AgentServer
    before(async () => {
      app = await build(dialect, { TANDEM_EGRESS_ALLOW: '127.0.0.0/8' }, { ownDatabase: true })
      server = await startAgentServer(() => ({ status: 200, body: { output: { text: ANSWER } } }))
    })
    after(async () => {
      await app.close()
      await server.close()
    })

    async function storedBytes(streamId: string): Promise<number> {
      const { db } = app.database
      const len = app.database.dialect === 'sqlite' ? 'length' : 'octet_length'
      const q = (table: string, column: string) =>
        sql<{ n: number | string | null }>`select sum(${sql.raw(len)}(${sql.ref(column)})) as n from ${sql.table(table)} where stream_id = ${streamId}`.execute(db)
      const parts = await Promise.all([q('stream_events', 'data'), q('runs', 'document'), q('messages', 'text')])
      return parts.reduce((sum, r) => sum + Number(r.rows[0]?.n ?? 0), 0)
    }

    it('50 revises with maximal notes: events ≤ 64 KiB, summaries, a bounded run, linear growth; the 51st attempt is refused', { timeout: 300000 }, async () => {
      const streamId = await createStream(app, 'Bounded')
      const agentId = await createAgent(app, { endpointUrl: server.url })
      const cycleId = await createCycle(app, streamId, [{ agentId, autoAdvance: false }])
      const started = await send(app, 'POST', `/api/cycles/streams/${streamId}/cycles/${cycleId}/runs`, { input: { ticket: 1 } })
      assert.equal(started.statusCode, 201, started.body)
      const runId = started.json().id as string
      let run = await runIn(app, runId, 'waiting', 30000)
      const phaseId = run.phases[0].id as string
      const growth: number[] = []
      let last = await storedBytes(streamId)
      for (let attempt = 1; attempt < 50; attempt++) {
        const revised = await send(app, 'POST', `/api/runs/${runId}/phases/${phaseId}/decision`, { decision: 'revise', note: NOTE })
        assert.equal(revised.statusCode, 200, revised.body)
        run = await waitFor(async () => {
          const now = await getRun(app, runId)
          return now.status === 'waiting' && now.phases[0].attempts === attempt + 1 ? now : undefined
        }, 30000, `attempt ${attempt + 1}`)
        const bytes = await storedBytes(streamId)
        growth.push(bytes - last)
        last = bytes
      }
      assert.equal(run.phases[0].attempts, 50)
      const refused = await send(app, 'POST', `/api/runs/${runId}/phases/${phaseId}/decision`, { decision: 'revise', note: NOTE })
      assert.equal(refused.statusCode, 422, refused.body)
      assert.equal(refused.json().type, 'urn:tandem:problem:too-many-attempts')
      assert.equal((await getRun(app, runId)).phases[0].attempts, 50, 'the refusal changed nothing')

      const document = JSON.stringify(await getRun(app, runId))
      assert.ok(document.length < 50 * (NOTE.length + 1000) + ANSWER.length + 20000, `the run document is ${document.length} bytes`)
      const events: Array<{ id: string; type: string; data: Record<string, unknown> }> = []
      for (let after = '0'; ; ) {
        const page = await send(app, 'GET', `/api/streams/${streamId}/events?after=${after}&limit=100`, undefined, { accept: 'application/json' })
        assert.equal(page.statusCode, 200, page.body)
        const batch = page.json().data as typeof events
        if (batch.length === 0) break
        events.push(...batch)
        after = batch.at(-1)!.id
      }
      for (const event of events) assert.ok(Buffer.byteLength(JSON.stringify(event.data)) <= EVENT_LIMIT, `a ${event.type} event of ${Buffer.byteLength(JSON.stringify(event.data))} bytes`)
      const updates = events.filter((e) => e.type === 'run.updated')
      assert.ok(updates.length >= 99)
      const summary = updates.at(-1)!.data as { phases: Array<Record<string, unknown>> }
      assert.deepEqual(Object.keys(summary.phases[0]!).sort(), ['agentId', 'approvals', 'attempts', 'error', 'id', 'index', 'lastDecision', 'output', 'phaseName', 'status'])
      assert.ok(((summary.phases[0]!.output as { preview: string }).preview).length <= 500)

      const first = growth.slice(0, 10).reduce((a, b) => a + b, 0)
      const lastTen = growth.slice(-10).reduce((a, b) => a + b, 0)
      assert.ok(lastTen <= first * 1.5, `growth is not linear: the first ten revises added ${first} bytes, the last ten ${lastTen}`)
      for (const bytes of growth) assert.ok(bytes <= PER_REVISE_BOUND, `one revise added ${bytes} bytes`)
    })

    it('input ≤ 64 KiB and notes ≤ 4,000 characters, at the bound and one past it', async () => {
      const streamId = await createStream(app, 'Inputs')
      const agentId = await createAgent(app, { endpointUrl: 'http://127.0.0.1:9/never' })
      const cycleId = await createCycle(app, streamId, [{ agentId }])
      const url = `/api/cycles/streams/${streamId}/cycles/${cycleId}/runs`
      const exact = { blob: 'i'.repeat(64 * 1024 - '{"blob":""}'.length) }
      const ok = await send(app, 'POST', url, { input: exact })
      assert.equal(ok.statusCode, 201, ok.body)
      const tooBig = await send(app, 'POST', url, { input: { blob: `${exact.blob}i` } })
      assert.equal(tooBig.statusCode, 400)
      assert.deepEqual(tooBig.json().errors.map((e: { pointer: string }) => e.pointer), ['/input'])
      const trigger = await send(app, 'POST', `/api/streams/${streamId}/triggers/new-ticket`, { input: { blob: `${exact.blob}i` } })
      assert.equal(trigger.statusCode, 400)
      // The run.created of a 64 KiB input is larger than an event may be: it comes without its input, truncated.
      const page = await send(app, 'GET', `/api/streams/${streamId}/events?after=0&limit=100`, undefined, { accept: 'application/json' })
      const created = (page.json().data as Array<{ type: string; data: Record<string, unknown> }>).find((e) => e.type === 'run.created' && e.data.id === ok.json().id)!
      assert.equal(created.data.truncated, true)
      assert.equal(created.data.input, undefined)
      assert.equal(created.data.status, 'running')
    })
  })
}
