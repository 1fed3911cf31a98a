// POST /api/runs/{id}/retry: a new run of a failed or canceled one (same stream, cycle, trigger name, input and
// depth, the phases it had), `retryOf`/`retriedBy` set in one transaction, once; the 409s, 404, 403 and
// Idempotency-Key. Also GET …/runs?order=desc, the inbox's filters and automation naming no saved cycle.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { createCycle, createStream, NIL, runIn, startRun } from './setup.js'
import { keyFor, waitingStream } from '../schedules/setup.js'

for (const dialect of dialects()) {
  describe(`retry, order=desc, inbox filters, automation warnings (${dialect})`, () => {
    let app: FastifyInstance
    let maria: Record<string, string>
    before(async () => {
      app = await build(dialect, {}, { ownDatabase: true })
      maria = await keyFor(app, 'maria', 'member')
    })
    after(async () => app.close())

    it('retries a canceled run once, copying what it had; refuses the others', async () => {
      const streamId = await createStream(app, 'Retry')
      const cycleId = await createCycle(app, streamId, [{ agentId: NIL, autoAdvance: false, name: 'Review' }], 'retry-me')
      const first = await startRun(app, streamId, cycleId, { ticket: 7 })
      const waiting = await runIn(app, first.id, 'waiting')
      const early = await send(app, 'POST', `/api/runs/${first.id}/retry`)
      assert.equal(early.statusCode, 409, early.body)
      assert.equal(early.json().type, 'urn:tandem:problem:run-not-retryable')
      assert.match(early.json().detail, /waiting/)
      assert.equal((await send(app, 'POST', `/api/runs/${first.id}/cancel`)).statusCode, 200)
      // The cycle changes afterwards: the retry copies the phases the run had, not the cycle's new ones.
      const retried = await send(app, 'POST', `/api/runs/${first.id}/retry`, {}, { ...maria, 'idempotency-key': 'retry-1' })
      assert.equal(retried.statusCode, 201, retried.body)
      const run = retried.json()
      assert.equal(retried.headers.location, `/api/runs/${run.id}`)
      assert.equal(run.retryOf, first.id)
      assert.equal(run.retriedBy, null)
      assert.deepEqual([run.streamId, run.cycleId, run.triggerName, run.depth], [streamId, cycleId, 'retry-me', 0])
      assert.deepEqual(run.input, { ticket: 7 })
      assert.deepEqual(run.trigger, { kind: 'manual', id: null })
      assert.notEqual(run.createdBy, first.createdBy, 'started by the caller')
      assert.deepEqual(run.phases.map((p: any) => [p.phaseId, p.phaseName, p.policy]), waiting.phases.map((p: any) => [p.phaseId, p.phaseName, p.policy]))
      const replay = await send(app, 'POST', `/api/runs/${first.id}/retry`, {}, { ...maria, 'idempotency-key': 'retry-1' })
      assert.equal(replay.json().id, run.id, 'the same key answers the same run')
      const old = (await send(app, 'GET', `/api/runs/${first.id}`)).json()
      assert.equal(old.retriedBy, run.id)
      const again = await send(app, 'POST', `/api/runs/${first.id}/retry`)
      assert.equal(again.statusCode, 409)
      assert.equal(again.json().type, 'urn:tandem:problem:already-retried')
      assert.equal(again.json().retriedBy, run.id)
      assert.equal((await send(app, 'POST', '/api/runs/0190a000-0000-7000-8000-000000000000/retry')).statusCode, 404)
      const bad = await send(app, 'POST', `/api/runs/${first.id}/retry`, { nope: 1 })
      assert.equal(bad.statusCode, 400)
      // Newest first with order=desc, in pages.
      const desc = (await send(app, 'GET', `/api/cycles/streams/${streamId}/runs?order=desc&limit=1`)).json()
      assert.deepEqual(desc.data.map((r: any) => r.id), [run.id])
      const next = (await send(app, 'GET', `/api/cycles/streams/${streamId}/runs?order=desc&limit=1&cursor=${encodeURIComponent(desc.nextCursor)}`)).json()
      assert.deepEqual(next.data.map((r: any) => r.id), [first.id])
      const asc = (await send(app, 'GET', `/api/cycles/streams/${streamId}/runs`)).json()
      assert.deepEqual(asc.data.map((r: any) => r.id), [first.id, run.id], 'oldest first by default')
      assert.equal((await send(app, 'GET', `/api/cycles/streams/${streamId}/runs?order=up`)).statusCode, 400)
    })

    it('the inbox narrows by kind, streamId and claimed=me; anything else is a 400', async () => {
      const a = await waitingStream(app, 'filter-a', [])
      const b = await waitingStream(app, 'filter-b', [])
      const runA = (await send(app, 'POST', `/api/streams/${a.streamId}/triggers/filter-a`, {}, maria)).json().runs[0]
      const runB = (await send(app, 'POST', `/api/streams/${b.streamId}/triggers/filter-b`, {}, maria)).json().runs[0]
      const waitingA = await runIn(app, runA.id, 'waiting')
      await runIn(app, runB.id, 'waiting')
      const inbox = async (query: string) => {
        const res = await send(app, 'GET', `/api/me/inbox${query}`, undefined, maria)
        assert.equal(res.statusCode, 200, res.body)
        return res.json().data.map((item: any) => item.runId)
      }
      assert.deepEqual(await inbox(`?streamId=${a.streamId}`), [runA.id])
      assert.ok((await inbox('?kind=decision')).includes(runB.id))
      assert.deepEqual(await inbox('?kind=question'), [])
      assert.deepEqual(await inbox('?claimed=me'), [])
      assert.equal((await send(app, 'POST', `/api/runs/${runA.id}/phases/${waitingA.phases[0].id}/claim`, undefined, maria)).statusCode, 200)
      assert.deepEqual(await inbox('?claimed=me'), [runA.id])
      for (const query of ['?kind=nope', '?streamId=nope', '?claimed=you', '?other=1']) {
        const res = await send(app, 'GET', `/api/me/inbox${query}`, undefined, maria)
        assert.equal(res.statusCode, 400, query)
        assert.ok(res.json().errors.length >= 1, query)
      }
    })

    it('automation whose trigger name no saved cycle has is saved with a no-matching-cycle warning', async () => {
      const { streamId } = await waitingStream(app, 'known', [])
      const unknown = await send(app, 'POST', `/api/streams/${streamId}/schedules`, { triggerName: 'nobody-has-this', cron: '0 9 * * 1-5' })
      assert.equal(unknown.statusCode, 201, unknown.body)
      assert.deepEqual(unknown.json().warnings.map((w: any) => w.code), ['no-matching-cycle'])
      const known = await send(app, 'POST', `/api/streams/${streamId}/schedules`, { triggerName: 'KNOWN', cron: '0 9 * * 1-5' })
      assert.equal(known.json().warnings, undefined)
      const trigger = await send(app, 'POST', `/api/streams/${streamId}/message-triggers`, { triggerName: 'nobody-has-this', match: { prefix: '!go' } })
      assert.equal(trigger.statusCode, 201, trigger.body)
      assert.deepEqual(trigger.json().warnings.map((w: any) => w.code), ['no-matching-cycle'])
      const hook = await send(app, 'POST', `/api/streams/${streamId}/hooks`, { triggerName: 'nobody-has-this' })
      assert.equal(hook.statusCode, 201, hook.body)
      assert.deepEqual(hook.json().warnings.map((w: any) => w.code), ['no-matching-cycle'])
      assert.ok(hook.json().secret)
    })
  })
}
