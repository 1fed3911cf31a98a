// Message triggers: mention, prefix and authorType; the run's input and trigger; and the loop guard — an
// agent's answer never fires the cycle whose run wrote it, and a message written at depth 5 fires nothing.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, pointers, send } from '../helpers.js'
import { startAgentServer, waitFor, type AgentServer } from '../runs/agent-server.js'
import { createAgent, createCycle, createStream, NIL } from '../runs/setup.js'
import { runsOf } from '../schedules/setup.js'
import { MAX_TRIGGER_DEPTH } from '../../src/triggers/message-triggers.js'
import { pendingCount } from '../clock.js'
import { waitFor as waitUntil } from '../wait.js'

const text = (value: string) => ({ content: { blocks: [{ type: 'rich_text', elements: [{ type: 'paragraph', children: [{ type: 'text', text: value }] }] }] } })

for (const dialect of dialects()) {
  describe(`message triggers (${dialect})`, () => {
    let app: FastifyInstance
    let agent: AgentServer
    before(async () => {
      agent = await startAgentServer(() => ({ status: 200, body: { output: { text: '/echo again, @triage' } } }))
      app = await build(dialect, { TANDEM_EGRESS_ALLOW: '127.0.0.0/8' }, { ownDatabase: true })
    })
    after(async () => {
      await app.close()
      await agent.close()
    })

    const post = (streamId: string, value: string) => send(app, 'POST', `/api/chat/streams/${streamId}/messages`, text(value))
    const addTrigger = (streamId: string, triggerName: string, match: Record<string, string>) => send(app, 'POST', `/api/streams/${streamId}/message-triggers`, { triggerName, match })
    /**
     * Until no message's trigger job is left: a message that matches enqueues its job in the transaction that posts
     * it, so once none is left, every run the messages so far will start has started.
     */
    const settle = () => waitUntil(async () => (await pendingCount(app, 'message-trigger:')) === 0, { what: 'no message trigger job left' })

    it('refuses an empty match or a bad field with a pointer; lists and deletes', async () => {
      const streamId = await createStream(app, 'mt-crud')
      assert.deepEqual(pointers(await addTrigger(streamId, 't', {})), ['/match'])
      assert.deepEqual(pointers(await addTrigger(streamId, 't', { authorType: 'robot' })), ['/match/authorType'])
      assert.deepEqual(pointers(await addTrigger(streamId, 't', { mention: 'not a handle' })), ['/match/mention'])
      const created = await addTrigger(streamId, 't', { mention: '@Maria' })
      assert.equal(created.statusCode, 201, created.body)
      assert.deepEqual(created.json().match, { mention: 'maria', prefix: null, authorType: null })
      assert.equal((await send(app, 'GET', `/api/streams/${streamId}/message-triggers`)).json().data.length, 1)
      assert.equal((await send(app, 'DELETE', `/api/message-triggers/${created.json().id}`)).statusCode, 204)
      assert.equal((await send(app, 'DELETE', `/api/message-triggers/${created.json().id}`)).statusCode, 404)
    })

    it('fires on a prefix, a mention or an author type, with the message as input', async () => {
      const streamId = await createStream(app, 'mt-match')
      await createCycle(app, streamId, [{ agentId: NIL, autoAdvance: false }], 'triage')
      const byPrefix = (await addTrigger(streamId, 'triage', { prefix: '/triage' })).json()
      await addTrigger(streamId, 'triage', { mention: 'helper', authorType: 'principal' })
      const message = (await post(streamId, '/TRIAGE the printer is on fire')).json()
      const [run] = await waitFor(async () => {
        const runs = await runsOf(app, streamId)
        return runs.length === 1 ? runs : undefined
      }, 10000, 'the prefix run')
      assert.deepEqual(run.trigger, { kind: 'message', id: byPrefix.id })
      assert.deepEqual(run.input, { message: { id: message.id, text: '/TRIAGE the printer is on fire', authorId: message.authorId, authorType: 'principal' } })
      assert.equal(run.depth, 0)
      assert.equal(run.createdBy, message.authorId)
      await post(streamId, 'no command here, not even @helpers or me@helper.org')
      await post(streamId, 'please look, @Helper.')
      await waitFor(async () => ((await runsOf(app, streamId)).length === 2 ? true : undefined), 10000, 'the mention run')
      await settle()
      assert.equal((await runsOf(app, streamId)).length, 2, 'nothing fired on the message that matched nothing')
    })

    it('an agent\'s answer that matches never fires the cycle whose run wrote it', { timeout: 30000 }, async () => {
      const agentId = await createAgent(app, { endpointUrl: agent.url })
      const streamId = await createStream(app, 'mt-self')
      await createCycle(app, streamId, [{ agentId, autoAdvance: true }], 'echo')
      await addTrigger(streamId, 'echo', { prefix: '/echo' })
      await post(streamId, '/echo start')
      await waitFor(async () => {
        const runs = await runsOf(app, streamId)
        return runs.length === 1 && runs[0].status === 'succeeded' ? true : undefined
      }, 15000, 'the first run to succeed')
      await settle()
      const runs = await runsOf(app, streamId)
      assert.equal(runs.length, 1, 'the agent\'s "/echo again" did not start its own cycle again')
    })

    it('two cycles that trigger each other stop at depth 5', { timeout: 60000 }, async () => {
      const agentId = await createAgent(app, { endpointUrl: agent.url })
      const streamId = await createStream(app, 'mt-depth')
      const first = await createCycle(app, streamId, [{ agentId, autoAdvance: true }], 'echo')
      const second = await createCycle(app, streamId, [{ agentId, autoAdvance: true }], 'echo')
      await addTrigger(streamId, 'echo', { prefix: '/echo' })
      await post(streamId, '/echo start')
      // Each cycle's answer starts the other: two chains of depths 0..5.
      const expected = 2 * (MAX_TRIGGER_DEPTH + 1)
      await waitFor(async () => {
        const runs = await runsOf(app, streamId)
        return runs.length >= expected && runs.every((r) => r.status === 'succeeded') ? true : undefined
      }, 45000, `${expected} runs`)
      await settle()
      const runs = await runsOf(app, streamId)
      assert.equal(runs.length, expected)
      assert.deepEqual(runs.map((r) => r.depth).sort(), [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5])
      const byId = new Map(runs.map((r) => [r.id, r]))
      for (const run of runs.filter((r) => r.depth > 0)) {
        const writer = runs.find((r) => r.phases[0].output?.messageId === run.input.message.id)
        assert.ok(writer, 'started by another run\'s message')
        assert.equal(run.depth, writer.depth + 1)
        assert.notEqual(run.cycleId, writer.cycleId, 'never the cycle that wrote the message')
        assert.equal(run.input.message.authorType, 'agent')
      }
      assert.ok(byId.size === expected && [first, second].every((c) => runs.some((r) => r.cycleId === c)))
    })
  })
}
