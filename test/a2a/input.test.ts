// A question the caller may answer is INPUT_REQUIRED, answered on the same task (a SendMessage with its taskId);
// one only the phase's pool may answer is AUTH_REQUIRED naming who must answer, and the caller's text is posted as
// a comment instead. Through a listening Tandem with an agent that asks with tandem.ask_operator.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { waitFor } from '../runs/agent-server.js'
import { createAgent, createCycle, createStream, getRun } from '../runs/setup.js'
import { expose, keyFor, listen, rpc } from './setup.js'
import { bearer, createKey } from '../auth.js'
import { itReadsNoWholeGrowingTable, watchFullScans, type FullScans } from '../db/full-scans.js'

const local = (url: string) => new URL(url).pathname

for (const dialect of dialects()) {
  describe(`A2A questions: INPUT_REQUIRED answered on the same task (${dialect})`, () => {
    let app: FastifyInstance
    let base: string
    let streamId: string
    let agentId: string
    let agentKey: string
    let ottoKey: string
    let scans: FullScans | null = null

    before(async () => {
      app = await build(dialect, { TANDEM_WORKERS: '4', TANDEM_A2A_WAIT_S: '0' }, { ownDatabase: true })
      const workspaceId = (await send(app, 'GET', '/api/me')).json().workspaceId
      agentId = await createAgent(app, { providerType: 'custom_token_only', capabilities: { streaming: false, tools: ['tandem.ask_operator'] } })
      agentKey = (await createKey(app, { workspaceId, name: 'worker', agentId })).key
      ottoKey = await keyFor(app, 'otto')
      streamId = await createStream(app)
      base = await listen(app)
      scans = watchFullScans(app)
    })
    after(() => app.close())

    /** A task started over A2A by otto on a cycle whose pool is `pool`, its agent asking `question`. */
    async function asked(pool: string[], question: string) {
      const cycleId = await createCycle(app, streamId, [{ agentId, operatorPool: pool }], `q-${Math.random()}`)
      await expose(app, streamId, cycleId)
      const keyed = bearer(ottoKey)
      const started = await rpc(base, cycleId, 'SendMessage', { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'Clean up' }] }, configuration: { returnImmediately: true } }, keyed)
      const taskId = started.body.result.task.id as string
      const payload: any = await waitFor(async () => {
        const res = await send(app, 'POST', '/api/tasks/claim', {}, bearer(agentKey))
        return res.statusCode === 200 ? res.json() : undefined
      })
      const call = await send(app, 'POST', `${local(payload.toolsUrl)}/tandem.ask_operator`, { input: { question } }, bearer(payload.result.token))
      assert.equal(call.statusCode, 202, call.body)
      return { cycleId, taskId, keyed, payload, callId: call.json().callId as string }
    }

    it('the starter in the pool: INPUT_REQUIRED with the question, and the reply is the answer', async () => {
      const { cycleId, taskId, keyed, payload, callId } = await asked(['@otto'], 'Which file?')
      const task = (await rpc(base, cycleId, 'GetTask', { id: taskId }, keyed)).body.result
      assert.equal(task.status.state, 'TASK_STATE_INPUT_REQUIRED')
      assert.equal(task.status.message.parts[0].text, 'Which file?')
      assert.equal(task.status.message.metadata.tandem.waitingFor, 'question')
      assert.equal(task.status.message.metadata.tandem.callId, callId)
      const reply = await rpc(base, cycleId, 'SendMessage', { message: { messageId: 'm2', role: 'ROLE_USER', taskId, parts: [{ text: 'the old one' }] } }, keyed)
      assert.equal(reply.body.result.task.id, taskId)
      const read = (await send(app, 'GET', `/api/tasks/${payload.task.id}/tool-calls/${callId}`, undefined, bearer(payload.result.token))).json()
      assert.deepEqual([read.status, read.output], ['succeeded', 'the old one'])
      assert.equal((await getRun(app, taskId)).phases[0].status, 'running')
      const history = (await rpc(base, cycleId, 'GetTask', { id: taskId }, keyed)).body.result.history
      assert.deepEqual(history.filter((m: any) => m.role === 'ROLE_USER').map((m: any) => m.parts[0].text), ['Clean up', 'the old one'])
    })

    it('the starter outside the pool: AUTH_REQUIRED naming who must answer; the reply is a comment', async () => {
      const { cycleId, taskId, keyed } = await asked(['@maria'], 'Delete it?')
      const task = (await rpc(base, cycleId, 'GetTask', { id: taskId }, keyed)).body.result
      assert.equal(task.status.state, 'TASK_STATE_AUTH_REQUIRED')
      assert.equal(task.status.message.parts[0].text, 'Waiting for @maria to answer in "Phase 0": Delete it?')
      await rpc(base, cycleId, 'SendMessage', { message: { messageId: 'm3', role: 'ROLE_USER', taskId, parts: [{ text: 'yes please' }] } }, keyed)
      assert.equal((await getRun(app, taskId)).phases[0].status, 'awaiting_input', 'not answered')
      const messages = (await send(app, 'GET', `/api/chat/streams/${streamId}/messages?limit=100`)).json().data
      assert.ok(messages.some((m: any) => m.text === 'yes please'), 'posted as a comment')
    })

    // Last: after every flow above, what they read.
    if (dialect === 'sqlite') itReadsNoWholeGrowingTable(() => scans)
  })
}
