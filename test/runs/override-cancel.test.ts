// docs/operators.md "No one to decide": an admin outside a phase's pool decides with `override: true` (recorded on the
// decision), nobody else may override; `cancel` follows the rule of deciding: the pool of a phase the run waits on,
// the principal who started the run, or an admin; anyone else 403 and nothing changes.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, pointers, send } from '../helpers.js'
import { NIL, createCycle, createStream, getRun, runIn, startRun } from './setup.js'
import { createKey } from '../auth.js'

for (const dialect of dialects()) {
  describe(`admin override and the cancel rule (${dialect})`, () => {
    let app: FastifyInstance
    let streamId: string
    let mariaCycle: string
    const as: Record<'maria' | 'mia' | 'otto' | 'ada', { authorization: string }> = {} as never

    before(async () => {
      app = await build(dialect, {}, { ownDatabase: true })
      const workspaceId = (await send(app, 'GET', '/api/me')).json().workspaceId
      const key = async (name: string, handle: string, role?: 'admin') =>
        (await createKey(app, { workspaceId, name, handle, ...(role ? { role } : {}) })).headers
      as.maria = await key('Maria', 'maria')
      as.mia = await key('Mia', 'mia')
      as.otto = await key('Otto', 'otto')
      as.ada = await key('Ada', 'ada', 'admin')
      streamId = await createStream(app)
      mariaCycle = await createCycle(app, streamId, [{ agentId: NIL, operatorPool: ['@Maria'] }])
    })
    after(() => app.close())

    /** A run of `cycleId` started by `by` (the local admin when absent), waiting on its first phase. */
    const waitingRun = async (cycleId: string, by: Record<string, string> = {}) => {
      const run = await startRun(app, streamId, cycleId, { ticket: 1 }, by)
      const waiting = await runIn(app, run.id, 'waiting')
      return { id: run.id as string, phaseId: waiting.phases[0].id as string, createdBy: run.createdBy as string }
    }
    const decisionUrl = (run: { id: string; phaseId: string }) => `/api/runs/${run.id}/phases/${run.phaseId}/decision`

    it('an admin outside the pool: 403 without override, decided and recorded with it', async () => {
      const run = await waitingRun(mariaCycle)
      const refused = await send(app, 'POST', decisionUrl(run), { decision: 'approve' }, as.ada)
      assert.equal(refused.statusCode, 403, refused.body)
      assert.match(refused.json().detail, /override/)
      assert.equal((await send(app, 'POST', decisionUrl(run), { decision: 'approve', override: false }, as.ada)).statusCode, 403)
      let now = await getRun(app, run.id)
      assert.equal(now.status, 'waiting')
      assert.deepEqual(now.phases[0].decisions, [])

      const ok = await send(app, 'POST', decisionUrl(run), { decision: 'approve', note: 'Maria is away', override: true }, as.ada)
      assert.equal(ok.statusCode, 200, ok.body)
      now = await getRun(app, run.id)
      assert.equal(now.status, 'succeeded')
      const [decision] = now.phases[0].decisions
      assert.equal(decision.override, true)
      assert.equal(decision.handle, 'ada')
      assert.equal(decision.decision, 'approve')
    })

    it('override from a member is refused (403), even one in the pool; the phase still awaits', async () => {
      const run = await waitingRun(mariaCycle)
      for (const who of [as.mia, as.maria]) {
        const res = await send(app, 'POST', decisionUrl(run), { decision: 'reject', override: true }, who)
        assert.equal(res.statusCode, 403, res.body)
      }
      const now = await getRun(app, run.id)
      assert.equal(now.status, 'waiting')
      assert.deepEqual(now.phases[0].decisions, [])
      // A pool member's ordinary decision records no override.
      assert.equal((await send(app, 'POST', decisionUrl(run), { decision: 'approve' }, as.maria)).statusCode, 200)
      assert.equal('override' in (await getRun(app, run.id)).phases[0].decisions[0], false)
    })

    it('override that is not a boolean is a 400 naming /override', async () => {
      const run = await waitingRun(mariaCycle)
      assert.deepEqual(pointers(await send(app, 'POST', decisionUrl(run), { decision: 'approve', override: 'yes' }, as.ada)), ['/override'])
      assert.equal((await getRun(app, run.id)).status, 'waiting')
    })

    it('an admin in the pool who says override makes an ordinary decision (no override recorded)', async () => {
      const run = await waitingRun(await createCycle(app, streamId, [{ agentId: NIL, operatorPool: ['@Ada'] }], 'ada-decides'))
      assert.equal((await send(app, 'POST', decisionUrl(run), { decision: 'approve', override: true }, as.ada)).statusCode, 200)
      const [decision] = (await getRun(app, run.id)).phases[0].decisions
      assert.equal(decision.handle, 'ada')
      assert.equal('override' in decision, false)
    })

    it('cancel by a member neither in the pool nor the run\'s starter: 403, nothing changed', async () => {
      const run = await waitingRun(mariaCycle, as.mia)
      const before = await getRun(app, run.id)
      const res = await send(app, 'POST', `/api/runs/${run.id}/cancel`, undefined, as.otto)
      assert.equal(res.statusCode, 403, res.body)
      assert.deepEqual(await getRun(app, run.id), before)
    })

    it('cancel by the pool member, by the starter, by an admin: 200, canceled', async () => {
      for (const who of [as.maria, as.mia, as.ada]) {
        const run = await waitingRun(mariaCycle, as.mia)
        const res = await send(app, 'POST', `/api/runs/${run.id}/cancel`, undefined, who)
        assert.equal(res.statusCode, 200, res.body)
        assert.equal(res.json().status, 'canceled')
        assert.equal((await getRun(app, run.id)).phases[0].status, 'canceled')
      }
      // The local admin (no key) too.
      const run = await waitingRun(mariaCycle, as.mia)
      assert.equal((await send(app, 'POST', `/api/runs/${run.id}/cancel`)).statusCode, 200)
    })

    it('a phase with an empty pool: any member may decide it, so any member may cancel the run', async () => {
      const run = await waitingRun(await createCycle(app, streamId, [{ agentId: NIL, operatorPool: [] }], 'anyone'), as.mia)
      const res = await send(app, 'POST', `/api/runs/${run.id}/cancel`, undefined, as.otto)
      assert.equal(res.statusCode, 200, res.body)
    })

    it('a finished run: the rule first (403 to a stranger), then 409 to whoever may cancel', async () => {
      const run = await waitingRun(mariaCycle, as.mia)
      assert.equal((await send(app, 'POST', `/api/runs/${run.id}/cancel`, undefined, as.mia)).statusCode, 200)
      assert.equal((await send(app, 'POST', `/api/runs/${run.id}/cancel`, undefined, as.otto)).statusCode, 403)
      assert.equal((await send(app, 'POST', `/api/runs/${run.id}/cancel`, undefined, as.mia)).statusCode, 409)
    })
  })
}
