// The inbox: exactly the decisions the caller may act on (pool; empty pool: any admin or member), oldest
// first, in pages; agent keys 403; claims with their TTL; the live feed's inbox.added / inbox.removed.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { startAgentServer, waitFor } from '../runs/agent-server.js'
import { createAgent, createCycle, createStream, runIn } from '../runs/setup.js'
import { claimItem } from '../../src/inbox/claims.js'
import { ensureWorkspace } from '../../src/workspaces/store.js'
import { keyFor, waitingStream } from '../schedules/setup.js'
import { bearer, createKey } from '../auth.js'
import { openInboxFeed } from './feed-client.js'

for (const dialect of dialects()) {
  describe(`inbox (${dialect})`, () => {
    let app: FastifyInstance
    let maria: Record<string, string>
    let tom: Record<string, string>
    let boss: Record<string, string>
    before(async () => {
      app = await build(dialect, { TANDEM_CLAIM_TTL_S: '1', TANDEM_SSE_KEEPALIVE_MS: '200', TANDEM_EGRESS_ALLOW: '127.0.0.0/8' }, { ownDatabase: true })
      maria = await keyFor(app, 'maria', 'member')
      tom = await keyFor(app, 'tom', 'member')
      boss = await keyFor(app, 'boss', 'admin')
    })
    after(async () => app.close())

    const inbox = async (headers: Record<string, string>, query = '') => {
      const res = await send(app, 'GET', `/api/me/inbox${query}`, undefined, headers)
      assert.equal(res.statusCode, 200, res.body)
      return res.json() as { data: any[]; nextCursor: string | null }
    }
    async function startWaiting(pool: string[], trigger: string) {
      const { streamId } = await waitingStream(app, trigger, pool)
      const [run] = (await send(app, 'POST', `/api/streams/${streamId}/triggers/${trigger}`, {})).json().runs
      return runIn(app, run.id, 'waiting')
    }

    it('holds exactly what the caller may decide: the pool, or with an empty pool any admin or member', async () => {
      const pooled = await startWaiting(['@Maria'], 'pooled')
      const open = await startWaiting([], 'open')
      const mine = await inbox(maria)
      const ids = (page: { data: any[] }) => page.data.map((item) => item.phaseRunId)
      assert.deepEqual(ids(mine), [pooled.phases[0].id, open.phases[0].id], 'oldest first')
      assert.deepEqual(ids(await inbox(tom)), [open.phases[0].id], 'not in the pool')
      assert.deepEqual(ids(await inbox(boss)), [open.phases[0].id], 'an admin outside the pool does not get it')
      const item = mine.data[0]
      assert.deepEqual(Object.keys(item).sort(), ['approvals', 'callId', 'claimedBy', 'escalateAt', 'escalated', 'expireAt', 'kind', 'phaseName', 'phaseRunId', 'remindAt', 'runId', 'streamId', 'streamName', 'summary', 'triggerName', 'waitingSince'])
      assert.equal(item.kind, 'decision')
      assert.equal(item.runId, pooled.id)
      assert.equal(item.triggerName, 'pooled')
      assert.equal(item.phaseName, 'Review')
      assert.equal(item.summary, 'goal 0')
      assert.deepEqual([item.remindAt, item.escalateAt, item.expireAt, item.escalated, item.claimedBy, item.callId], [null, null, null, false, null, null])
      assert.deepEqual(item.approvals, { have: 0, need: 1 })
      // Decided: gone from every inbox.
      assert.equal((await send(app, 'POST', `/api/runs/${pooled.id}/phases/${pooled.phases[0].id}/decision`, { decision: 'approve' }, maria)).statusCode, 200)
      assert.deepEqual(ids(await inbox(maria)), [open.phases[0].id])
      await send(app, 'POST', `/api/runs/${open.id}/cancel`, {})
    })

    it('an agent\'s output is the summary (cut to 500 characters), waiting since its message', async () => {
      const agent = await startAgentServer(() => ({ status: 200, body: { output: { text: `Refund approved. ${'x'.repeat(600)}` } } }))
      try {
        const agentId = await createAgent(app, { endpointUrl: agent.url })
        const streamId = await createStream(app, 'Refunds')
        await createCycle(app, streamId, [{ agentId, autoAdvance: false, operatorPool: ['maria'], name: 'Draft' }], 'agent-output')
        const [started] = (await send(app, 'POST', `/api/streams/${streamId}/triggers/agent-output`, {})).json().runs
        const run = await runIn(app, started.id, 'waiting')
        const item = (await inbox(maria)).data.find((i) => i.runId === run.id)
        assert.equal(item.summary.length, 500)
        assert.ok(item.summary.startsWith('Refund approved. xxx'))
        assert.equal(item.streamName, 'Refunds')
        const message = (await send(app, 'GET', `/api/chat/messages/${run.phases[0].output.messageId}`)).json()
        assert.equal(item.waitingSince, message.createdAt)
        await send(app, 'POST', `/api/runs/${run.id}/cancel`, {})
      } finally {
        await agent.close()
      }
    })

    it('pages with a cursor; another workspace sees none of it; agent keys are refused', async () => {
      const started = []
      for (let i = 0; i < 3; i++) started.push(await startWaiting(['maria'], `page-${i}`))
      const first = await inbox(maria, '?limit=2')
      assert.equal(first.data.length, 2)
      assert.ok(first.nextCursor)
      const second = await inbox(maria, `?limit=2&cursor=${first.nextCursor}`)
      assert.deepEqual([...first.data, ...second.data].map((i) => i.runId), started.map((r) => r.id))
      assert.equal(second.nextCursor, null)
      assert.equal((await send(app, 'GET', '/api/me/inbox?cursor=bogus', undefined, maria)).statusCode, 400)
      const stranger = await keyFor(app, 'maria', 'member', 'other-team')
      assert.equal((await inbox(stranger)).data.length, 0)
      const agentId = await createAgent(app, { providerType: 'custom_token_only' })
      const agentKey = (await createKey(app, { name: 'bot', agentId })).key
      assert.equal((await send(app, 'GET', '/api/me/inbox', undefined, bearer(agentKey))).statusCode, 403)
      for (const run of started) await send(app, 'POST', `/api/runs/${run.id}/cancel`, {})
    })

    it('claims: anyone who may decide marks it, for TANDEM_CLAIM_TTL_S; others may not; DELETE releases', async () => {
      const run = await startWaiting(['maria', 'tom'], 'claimed')
      const path = `/api/runs/${run.id}/phases/${run.phases[0].id}/claim`
      const claimed = await send(app, 'POST', path, undefined, maria)
      assert.equal(claimed.statusCode, 200, claimed.body)
      assert.equal(claimed.json().claimedBy, 'maria')
      assert.equal((await inbox(tom)).data.find((i) => i.runId === run.id).claimedBy, 'maria')
      assert.equal((await send(app, 'POST', path, undefined, boss)).statusCode, 403)
      assert.equal((await send(app, 'DELETE', path, undefined, boss)).statusCode, 403)
      assert.equal((await send(app, 'DELETE', path, undefined, tom)).statusCode, 204)
      assert.equal((await inbox(maria)).data.find((i) => i.runId === run.id).claimedBy, null)
      await send(app, 'POST', path, undefined, tom)
      assert.equal((await inbox(maria)).data.find((i) => i.runId === run.id).claimedBy, 'tom')
      // Within 1.2 s (TANDEM_CLAIM_TTL_S is 1 here), the claim runs out.
      await waitFor(async () => (await inbox(maria)).data.find((i) => i.runId === run.id).claimedBy === null ? true : undefined, 1200, 'the claim to run out')
      // A claim is a signal, not a lock: another in the pool still decides.
      await send(app, 'POST', path, undefined, tom)
      assert.equal((await send(app, 'POST', `/api/runs/${run.id}/phases/${run.phases[0].id}/decision`, { decision: 'reject' }, maria)).statusCode, 200)
      assert.equal((await send(app, 'POST', path, undefined, maria)).statusCode, 409)
    })

    it('the live feed sends the current items, then inbox.added and inbox.removed as they change', { timeout: 30000 }, async () => {
      const before = await startWaiting(['maria'], 'live-before')
      await app.listen({ port: 0, host: '127.0.0.1' })
      const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
      const feed = await openInboxFeed(`${base}/api/me/inbox/events`, maria)
      const { events } = feed
      assert.equal(feed.res.status, 200)
      assert.match(feed.res.headers.get('content-type') ?? '', /^text\/event-stream/)
      try {
        await waitFor(() => events.find((e) => e.event === 'inbox.added' && e.data.runId === before.id), 10000, 'the current item')
        assert.equal((await app.metrics.sseClients.get()).values[0]?.value, 1, 'counted in tandem_sse_clients')
        const added = await startWaiting(['maria'], 'live-new')
        await waitFor(() => events.find((e) => e.event === 'inbox.added' && e.data.runId === added.id), 10000, 'inbox.added')
        // A claim (longer than this file's 1 s TTL) changes the item: the next read sends it again, claimed.
        await claimItem(app.database.db, { workspaceId: await ensureWorkspace(app.database.db, 'default'), runId: added.id, phaseRunId: added.phases[0].id, principalId: 'p', handle: 'maria', ttlS: 600 })
        await startWaiting(['tom'], 'live-not-mine')
        await waitFor(() => events.find((e) => e.event === 'inbox.added' && e.data.runId === added.id && e.data.claimedBy === 'maria'), 10000, 'the claimed item again')
        await send(app, 'POST', `/api/runs/${before.id}/phases/${before.phases[0].id}/decision`, { decision: 'approve' }, maria)
        await waitFor(() => events.find((e) => e.event === 'inbox.removed' && e.data.runId === before.id), 10000, 'inbox.removed')
        await waitFor(() => feed.comments() > 0, 5000, 'a keep-alive')
        assert.ok(events.every((e) => e.data.triggerName !== 'live-not-mine'), 'only the caller\'s items')
        await send(app, 'POST', `/api/runs/${added.id}/cancel`, {})
      } finally {
        await feed.close()
      }
      await waitFor(async () => (await app.metrics.sseClients.get()).values[0]?.value === 0, 5000, 'the feed to be uncounted')
    })
  })
}
