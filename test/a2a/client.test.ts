// A phase done by a remote A2A agent: Tandem's client (a custom_webhook agent with config.protocol "a2a") against
// an agent built with the official SDK on loopback, on both databases. The card is read with the agent's key, the
// task is sent once (messageId = the Tandem task id, a data part with the task), the remote task is polled to its
// end; a hanging or garbage remote fails its attempt within the dispatch time-out and is never sent the task twice;
// a config.protocol of another kind is agent-misconfigured.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { createAgent, createCycle, createStream, runIn, startRun } from '../runs/setup.js'
import { startRemoteAgent, type RemoteAgent } from './remote-agent.js'
import { waitFor } from '../wait.js'
import { itReadsNoWholeGrowingTable, watchFullScans, type FullScans } from '../db/full-scans.js'

for (const dialect of dialects()) {
  describe(`A2A client against an SDK-built remote agent (${dialect})`, () => {
    let app: FastifyInstance
    let remote: RemoteAgent
    let streamId: string
    let credentialId: string
    let scans: FullScans | null = null

    before(async () => {
      app = await build(dialect, { TANDEM_WORKERS: '4', TANDEM_EGRESS_ALLOW: '127.0.0.0/8', TANDEM_POLL_INTERVAL_MS: '50', TANDEM_DISPATCH_TIMEOUT_MS: '5000', TANDEM_DISPATCH_ATTEMPTS: '2' }, { ownDatabase: true })
      remote = await startRemoteAgent()
      streamId = await createStream(app)
      credentialId = (await send(app, 'POST', '/api/credentials', { name: 'remote key', secret: 'remote-secret-123' })).json().id
      scans = watchFullScans(app)
    })
    after(async () => {
      await app.close()
      await remote.close()
    })

    const remoteCycle = async (name: string, config: Record<string, unknown> = { protocol: 'a2a' }) => {
      const agentId = await createAgent(app, { name, providerType: 'custom_webhook', endpointUrl: remote.cardUrl, authMode: 'api_key', credentialId, config })
      return createCycle(app, streamId, [{ agentId, autoAdvance: true, name }], name)
    }

    it('sends the task once with the key and takes the remote\'s artifact as the phase\'s output', async () => {
      remote.behaviour = 'complete'
      const cycleId = await remoteCycle('Research')
      const run = await startRun(app, streamId, cycleId)
      const done = await runIn(app, run.id, ['succeeded', 'failed'])
      assert.equal(done.status, 'succeeded', JSON.stringify(done.phases[0].error))
      assert.match(done.phases[0].output.text, /^remote did: /)
      const mine = remote.received.filter((m) => m.parts?.[1]?.data?.tandem?.run?.id === run.id)
      assert.equal(mine.length, 1)
      const task = mine[0]!.parts[1].data.tandem.task
      assert.equal(mine[0]!.messageId, task.id, 'the message id is the Tandem task id')
      assert.equal(mine[0]!.role, 'ROLE_USER')
      assert.equal(mine[0]!.parts[1].data.tandem.result, undefined, 'no result URL or token leaves')
      assert.ok(remote.authorizations.every((a) => a === 'Bearer remote-secret-123'), 'the key on every call, the card included')
    })

    it('follows a working remote task by polling until it completes', async () => {
      remote.behaviour = 'work'
      const cycleId = await remoteCycle('Slow')
      const run = await startRun(app, streamId, cycleId)
      await waitUntil(() => remote.received.some((m) => m.parts?.[1]?.data?.tandem?.run?.id === run.id))
      remote.finish('finished later')
      const done = await runIn(app, run.id, ['succeeded', 'failed'])
      assert.equal(done.status, 'succeeded', JSON.stringify(done.phases[0].error))
      assert.equal(done.phases[0].output.text, 'finished later')
      assert.equal(remote.received.filter((m) => m.parts?.[1]?.data?.tandem?.run?.id === run.id).length, 1)
    })

    it('a revision continues the remote context and refers to the previous remote task', async () => {
      remote.behaviour = 'complete'
      const agentId = await createAgent(app, { name: 'Reviser', providerType: 'custom_webhook', endpointUrl: remote.cardUrl, authMode: 'api_key', credentialId, config: { protocol: 'a2a' } })
      const cycleId = await createCycle(app, streamId, [{ agentId, autoAdvance: false, name: 'Draft' }], 'draft')
      const run = await startRun(app, streamId, cycleId)
      const waiting = await runIn(app, run.id, 'waiting')
      const first = remote.received.find((m) => m.parts?.[1]?.data?.tandem?.run?.id === run.id)!
      const firstCall = remote.calls.find((c) => c.method === 'SendMessage' && c.params.message.messageId === first.messageId)!
      assert.ok(firstCall)
      const revised = await send(app, 'POST', `/api/runs/${run.id}/phases/${waiting.phases[0].id}/decision`, { decision: 'revise', note: 'shorter' })
      assert.equal(revised.statusCode, 200, revised.body)
      await waitUntil(() => remote.received.filter((m) => m.parts?.[1]?.data?.tandem?.run?.id === run.id).length === 2)
      const second = remote.received.filter((m) => m.parts?.[1]?.data?.tandem?.run?.id === run.id)[1]!
      assert.equal(second.parts[1].data.tandem.task.attempt, 2)
      assert.equal(second.referenceTaskIds?.length, 1)
      assert.ok(second.contextId, 'the previous context')
    })

    it('a remote asking for input is the phase\'s question; the operator\'s answer goes back on the same task', async () => {
      remote.behaviour = 'ask'
      const agentId = await createAgent(app, { name: 'Asker', providerType: 'custom_webhook', endpointUrl: remote.cardUrl, authMode: 'api_key', credentialId, config: { protocol: 'a2a' } })
      const cycleId = await createCycle(app, streamId, [{ agentId, name: 'Ask' }], 'ask')
      const run = await startRun(app, streamId, cycleId)
      const waiting = await runIn(app, run.id, 'waiting')
      assert.equal(waiting.phases[0].status, 'awaiting_input')
      const inbox = (await send(app, 'GET', '/api/me/inbox')).json().data
      assert.ok(inbox.some((item: any) => item.kind === 'question' && item.summary === 'Which year?'), JSON.stringify(inbox))
      const answered = await send(app, 'POST', `/api/runs/${run.id}/phases/${waiting.phases[0].id}/answer`, { text: '1969' })
      assert.equal(answered.statusCode, 200, answered.body)
      const done = await runIn(app, run.id, ['succeeded', 'failed'])
      assert.equal(done.status, 'succeeded', JSON.stringify(done.phases[0].error))
      assert.equal(done.phases[0].output.text, 'answer was: 1969')
      const first = remote.received.find((m) => m.parts?.[1]?.data?.tandem?.run?.id === run.id)!
      const replies = remote.received.filter((m) => typeof m.messageId === 'string' && m.messageId.startsWith(`${first.messageId}:`))
      assert.equal(replies.length, 1, 'the answer is sent once')
      assert.ok(replies[0]!.taskId)
    })

    it('a run canceled while the remote works cancels the remote task, once', async () => {
      remote.behaviour = 'work'
      const run = await startRun(app, streamId, await remoteCycle('Canceled'))
      await waitUntil(() => remote.received.some((m) => m.parts?.[1]?.data?.tandem?.run?.id === run.id))
      const message = remote.received.find((m) => m.parts?.[1]?.data?.tandem?.run?.id === run.id)!
      assert.equal((await send(app, 'POST', `/api/runs/${run.id}/cancel`, {})).statusCode, 200)
      await waitUntil(() => remote.calls.some((c) => c.method === 'CancelTask'))
      const cancels = remote.calls.filter((c) => c.method === 'CancelTask')
      assert.equal(cancels.length, 1)
      const sent = remote.calls.find((c) => c.method === 'SendMessage' && c.params.message.messageId === message.messageId)
      assert.ok(sent)
      remote.finish('too late')
    })

    it('a hanging remote fails the attempt within the dispatch time-out and is not sent the task again', async () => {
      remote.behaviour = 'hang'
      const cycleId = await remoteCycle('Hang')
      const started = Date.now()
      const run = await startRun(app, streamId, cycleId)
      const failed = await runIn(app, run.id, 'failed', 20000)
      assert.ok(Date.now() - started < 15000)
      assert.equal(failed.phases[0].error.type.endsWith('agent-failed'), true, JSON.stringify(failed.phases[0].error))
      assert.match(failed.phases[0].error.detail, /not sent again/)
      assert.equal(remote.received.filter((m) => m.parts?.[1]?.data?.tandem?.run?.id === run.id).length, 1)
    })

    it('a garbage answer fails the attempt; another config.protocol is agent-misconfigured', async () => {
      remote.behaviour = 'garbage'
      const run = await startRun(app, streamId, await remoteCycle('Garbage'))
      const failed = await runIn(app, run.id, 'failed', 20000)
      assert.match(failed.phases[0].error.type, /agent-failed$/)
      const odd = await startRun(app, streamId, await remoteCycle('Odd', { protocol: 'smoke-signals' }))
      const misconfigured = await runIn(app, odd.id, 'failed', 20000)
      assert.match(misconfigured.phases[0].error.type, /agent-misconfigured$/)
      const logs = JSON.stringify([failed, misconfigured])
      assert.ok(!logs.includes('remote-secret-123'))
    })

    // Last: after every flow above, what they read.
    if (dialect === 'sqlite') itReadsNoWholeGrowingTable(() => scans)
  })
}

const waitUntil = (check: () => boolean, ms = 10000): Promise<unknown> => waitFor(check, { timeoutMs: ms, what: 'a condition' })
