// Bad input to the run routes: 400 naming each offending field, limits tested on both sides, nothing changed;
// another workspace's runs are invisible (404); roles (403).
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, pointers, send } from '../helpers.js'
import { NIL, createAgent, createCycle, createStream, runIn, startRun } from './setup.js'
import { bearer, createKey } from '../auth.js'

for (const dialect of dialects()) {
  describe(`run routes: bad input, workspaces and roles (${dialect})`, () => {
    let app: FastifyInstance
    let streamId: string
    let cycleId: string
    let run: any
    let phaseId: string
    let mariaKey: string

    before(async () => {
      app = await build(dialect, {}, { ownDatabase: true })
      streamId = await createStream(app)
      cycleId = await createCycle(app, streamId, [{ agentId: NIL, operatorPool: ['@Maria'] }])
      // Maria exists before the run starts: a pool no one has would escalate the phase to admins at once.
      const workspaceId = (await send(app, 'GET', '/api/me')).json().workspaceId
      mariaKey = (await createKey(app, { workspaceId, name: 'Maria', handle: 'maria' })).key
      run = await startRun(app, streamId, cycleId)
      phaseId = (await runIn(app, run.id, 'waiting')).phases[0].id
    })
    after(() => app.close())

    const count = async () => (await send(app, 'GET', `/api/cycles/streams/${streamId}/runs?limit=100`)).json().data.length

    it('start: 400 with a pointer per offending field, and no run is created', async () => {
      const before = await count()
      const url = `/api/cycles/streams/${streamId}/cycles/${cycleId}/runs`
      const cases: Array<[unknown, string[]]> = [
        [{ input: 5 }, ['/input']],
        [{ input: [] }, ['/input']],
        [{ input: {}, extra: true }, ['/extra']],
        [{ input: null, other: 1 }, ['/input', '/other']],
      ]
      for (const [body, expected] of cases) {
        const res = await send(app, 'POST', url, body)
        assert.equal(res.statusCode, 400, JSON.stringify(body))
        assert.deepEqual(pointers(res), expected)
      }
      assert.equal((await send(app, 'POST', `/api/cycles/streams/${streamId}/cycles/not-a-uuid/runs`, {})).statusCode, 400)
      // The stream and the cycle are read in one query; the 404 still says which of them is missing.
      const missing = async (stream: string, cycle: string) => (await send(app, 'POST', `/api/cycles/streams/${stream}/cycles/${cycle}/runs`, {})).json()
      const unknown = '01890a5d-ac96-774b-bcce-b302099a8057'
      assert.deepEqual([(await missing(streamId, unknown)).status, (await missing(streamId, unknown)).detail], [404, 'Cycle was not found'])
      assert.equal((await missing(unknown, cycleId)).detail, 'Stream was not found')
      const otherStream = await createStream(app)
      assert.equal((await missing(otherStream, cycleId)).detail, 'Cycle was not found', 'a cycle of another stream is not this stream\'s')
      assert.equal(await count(), before)
      // The router refuses path parameters over 100 characters (414); 100 is fine.
      assert.equal((await send(app, 'POST', `/api/streams/${streamId}/triggers/${'x'.repeat(101)}`, {})).statusCode, 414)
      assert.equal((await send(app, 'POST', `/api/streams/${streamId}/triggers/${'x'.repeat(100)}`, {})).statusCode, 202)
    })

    it('list: status and limit checked on both sides', async () => {
      assert.deepEqual(pointers(await send(app, 'GET', `/api/cycles/streams/${streamId}/runs?status=done`)), ['/query/status'])
      assert.deepEqual(pointers(await send(app, 'GET', `/api/cycles/streams/${streamId}/runs?limit=0`)), ['/query/limit'])
      assert.deepEqual(pointers(await send(app, 'GET', `/api/cycles/streams/${streamId}/runs?limit=101`)), ['/query/limit'])
      assert.equal((await send(app, 'GET', `/api/cycles/streams/${streamId}/runs?limit=1`)).statusCode, 200)
      assert.equal((await send(app, 'GET', `/api/cycles/streams/${streamId}/runs?limit=100`)).statusCode, 200)
      assert.deepEqual(pointers(await send(app, 'GET', `/api/cycles/streams/${streamId}/runs?cursor=nope`)), ['/query/cursor'])
    })

    it('decision: 400s, the pool rule (403), and the phase still awaits', async () => {
      const url = `/api/runs/${run.id}/phases/${phaseId}/decision`
      assert.deepEqual(pointers(await send(app, 'POST', url, { decision: 'maybe' })), ['/decision'])
      assert.deepEqual(pointers(await send(app, 'POST', url, {})), ['/decision'])
      assert.deepEqual(pointers(await send(app, 'POST', url, { decision: 'approve', note: '' })), ['/note'])
      assert.deepEqual(pointers(await send(app, 'POST', url, { decision: 'approve', note: 'x'.repeat(4001) })), ['/note'])
      // The local admin is @local, not in the pool [@Maria]: 403.
      const forbidden = await send(app, 'POST', url, { decision: 'approve', note: 'x'.repeat(4000) })
      assert.equal(forbidden.statusCode, 403)
      const workspaceId = (await send(app, 'GET', '/api/me')).json().workspaceId
      const maria = mariaKey
      const member = (await createKey(app, { workspaceId, name: 'Someone' })).key
      assert.equal((await send(app, 'POST', url, { decision: 'approve' }, bearer(member))).statusCode, 403)
      assert.equal((await send(app, 'GET', `/api/runs/${run.id}`)).json().phases[0].status, 'awaiting_decision')
      const ok = await send(app, 'POST', url, { decision: 'approve', note: 'x'.repeat(4000) }, bearer(maria))
      assert.equal(ok.statusCode, 200, ok.body)
      assert.equal(ok.json().phases[0].decisions[0].handle, 'maria')
    })

    it('another workspace sees none of it (404); agent keys may not start, cancel or decide (403)', async () => {
      const other = (await createKey(app, { workspace: 'other', name: 'Olga', role: 'admin' })).key
      const as = bearer(other)
      assert.equal((await send(app, 'GET', `/api/runs/${run.id}`, undefined, as)).statusCode, 404)
      assert.equal((await send(app, 'POST', `/api/runs/${run.id}/cancel`, undefined, as)).statusCode, 404)
      assert.equal((await send(app, 'POST', `/api/runs/${run.id}/phases/${phaseId}/decision`, { decision: 'reject' }, as)).statusCode, 404)
      assert.equal((await send(app, 'GET', `/api/cycles/streams/${streamId}/runs`, undefined, as)).statusCode, 404)
      assert.equal((await send(app, 'POST', `/api/cycles/streams/${streamId}/cycles/${cycleId}/runs`, {}, as)).statusCode, 404)
      assert.equal((await send(app, 'POST', `/api/streams/${streamId}/triggers/new-ticket`, {}, as)).statusCode, 404)

      const agentId = await createAgent(app, { providerType: 'custom_token_only' })
      const workspaceId = (await send(app, 'GET', '/api/me')).json().workspaceId
      const agentKey = (await createKey(app, { workspaceId, name: 'bot', agentId })).headers
      assert.equal((await send(app, 'POST', `/api/cycles/streams/${streamId}/cycles/${cycleId}/runs`, {}, agentKey)).statusCode, 403)
      assert.equal((await send(app, 'POST', `/api/runs/${run.id}/cancel`, undefined, agentKey)).statusCode, 403)
      assert.equal((await send(app, 'POST', `/api/streams/${streamId}/triggers/new-ticket`, {}, agentKey)).statusCode, 403)
      // waitSeconds on both sides: 0 and 30 are accepted (a task is waiting, so 30 answers at once), -1 and 31 are not.
      await startRun(app, streamId, await createCycle(app, streamId, [{ agentId }]))
      assert.deepEqual(pointers(await send(app, 'POST', '/api/tasks/claim', { waitSeconds: -1 }, agentKey)), ['/waitSeconds'])
      assert.deepEqual(pointers(await send(app, 'POST', '/api/tasks/claim', { waitSeconds: 31 }, agentKey)), ['/waitSeconds'])
      assert.deepEqual(pointers(await send(app, 'POST', '/api/tasks/claim', { waitSeconds: 1.5 }, agentKey)), ['/waitSeconds'])
      assert.equal((await send(app, 'POST', '/api/tasks/claim', { waitSeconds: 30 }, agentKey)).statusCode, 200)
      assert.equal((await send(app, 'POST', '/api/tasks/claim', { waitSeconds: 0 }, agentKey)).statusCode, 204)
    })
  })
}
