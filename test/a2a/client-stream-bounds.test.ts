// The bound on one event stream of a remote A2A agent, on both databases: a stream under MAX_STREAM_BYTES is read
// to its end, one past it is cut and fails the attempt with agent-failed, and its message is not sent again. The
// dispatch time-out is long here, so that only the bytes decide (the SDK-built remote takes its time with 4 MiB).
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { createAgent, createCycle, createStream, runIn, startRun } from '../runs/setup.js'
import { MAX_STREAM_BYTES } from '../../src/a2a/remote-wire.js'
import { startRemoteAgent, type RemoteAgent } from './remote-agent.js'

for (const dialect of dialects()) {
  describe(`A2A client: the bound on a remote's event stream (${dialect})`, () => {
    let app: FastifyInstance
    let remote: RemoteAgent

    before(async () => {
      app = await build(dialect, { TANDEM_WORKERS: '2', TANDEM_EGRESS_ALLOW: '127.0.0.0/8', TANDEM_POLL_INTERVAL_MS: '50', TANDEM_DISPATCH_TIMEOUT_MS: '30000', TANDEM_DISPATCH_ATTEMPTS: '1' }, { ownDatabase: true })
      remote = await startRemoteAgent('flood', { streaming: true })
    })
    after(async () => {
      await app.close()
      await remote.close()
    })

    const runWith = async (name: string, bytes: number) => {
      remote.floodBytes = bytes
      const streamId = await createStream(app, name)
      const agentId = await createAgent(app, { name, providerType: 'custom_webhook', endpointUrl: remote.cardUrl, config: { protocol: 'a2a' } })
      const run = await startRun(app, streamId, await createCycle(app, streamId, [{ agentId, autoAdvance: true, name }], name))
      const done = await runIn(app, run.id, ['succeeded', 'failed'], 60000)
      const sent = remote.received.filter((m) => m.parts?.[1]?.data?.tandem?.run?.id === run.id).length
      return { done, sent, subscriptions: remote.calls.filter((c) => c.method === 'SubscribeToTask').length }
    }

    it('a stream under MAX_STREAM_BYTES is read to its end; one past it fails the attempt and is not sent again', { timeout: 120000 }, async () => {
      const under = await runWith('Under', MAX_STREAM_BYTES - 1)
      assert.equal(under.done.status, 'succeeded', JSON.stringify(under.done.phases[0].error))
      assert.equal(under.done.phases[0].output.text, 'flooded')
      assert.equal(under.subscriptions, 0, 'read in one stream')
      const over = await runWith('Over', MAX_STREAM_BYTES)
      assert.equal(over.done.status, 'failed')
      assert.match(over.done.phases[0].error.type, /agent-failed$/)
      assert.match(over.done.phases[0].error.detail, /larger than/)
      assert.equal(over.sent, 1, 'not sent again')
      assert.equal((await send(app, 'GET', `/api/runs/${over.done.id}`)).json().status, 'failed')
    })
  })
}
