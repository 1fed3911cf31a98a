// A remote A2A agent's AUTH_REQUIRED is a Tandem tool approval: an `a2a.authorize` call awaiting approval (the
// inbox's tool_approval), its input the remote's status text; the operator's approval or denial goes back on the
// same remote task, once, and the task's clock stands still meanwhile. Against an SDK-built remote, both databases.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { pendingJobs } from '../clock.js'
import { createAgent, createCycle, createStream, runIn, startRun } from '../runs/setup.js'
import { startRemoteAgent, type RemoteAgent } from './remote-agent.js'

for (const dialect of dialects()) {
  describe(`A2A client: a remote AUTH_REQUIRED is a tool approval (${dialect})`, () => {
    let app: FastifyInstance
    let remote: RemoteAgent
    let streamId: string
    let cycleId: string

    before(async () => {
      app = await build(dialect, { TANDEM_WORKERS: '4', TANDEM_EGRESS_ALLOW: '127.0.0.0/8', TANDEM_POLL_INTERVAL_MS: '50', TANDEM_TASK_TIMEOUT_S: '300' }, { ownDatabase: true })
      remote = await startRemoteAgent('authorize')
      streamId = await createStream(app)
      const agentId = await createAgent(app, { name: 'Janitor', providerType: 'custom_webhook', endpointUrl: remote.cardUrl, config: { protocol: 'a2a' } })
      cycleId = await createCycle(app, streamId, [{ agentId, name: 'Clean up' }], 'clean')
    })
    after(async () => {
      await app.close()
      await remote.close()
    })

    /** A run whose remote asks for an authorization: the waiting call, from the tool calls and the inbox. */
    async function authorizing() {
      const run = await startRun(app, streamId, cycleId)
      const waiting = await runIn(app, run.id, 'waiting', 30000)
      assert.equal(waiting.phases[0].status, 'awaiting_tool_approval')
      const calls = (await send(app, 'GET', `/api/runs/${run.id}/tool-calls`)).json().data
      assert.equal(calls.length, 1)
      const [call] = calls
      assert.deepEqual([call.name, call.status, call.input], ['a2a.authorize', 'awaiting_approval', { message: 'May I delete the old backups?' }])
      const inbox = (await send(app, 'GET', '/api/me/inbox')).json().data
      assert.ok(inbox.some((item: any) => item.kind === 'tool_approval' && item.runId === run.id), JSON.stringify(inbox))
      const task = await app.database.db.selectFrom('run_tasks').select('id').where('run_id', '=', run.id).executeTakeFirstOrThrow()
      assert.deepEqual(await pendingJobs(app, `timeout:${task.id}`), [], 'the clock stands still')
      return { run, call, taskId: task.id }
    }

    const replies = (taskId: string) => remote.received.filter((m) => typeof m.messageId === 'string' && m.messageId.startsWith(`${taskId}:`))

    it('approved: "approved by @h: note" goes back on the same task, once; the call succeeds; the run goes on', async () => {
      const { run, call, taskId } = await authorizing()
      const decided = await send(app, 'POST', `/api/runs/${run.id}/tool-calls/${call.id}/decision`, { decision: 'approve', note: 'go ahead' })
      assert.equal(decided.statusCode, 200, decided.body)
      const done = await runIn(app, run.id, ['succeeded', 'failed'], 30000)
      assert.equal(done.status, 'succeeded', JSON.stringify(done.phases[0].error))
      assert.match(done.phases[0].output.text, /^answer was: approved by @?\S+: go ahead$/)
      assert.equal(replies(taskId).length, 1, 'sent once')
      assert.ok(replies(taskId)[0]!.taskId, 'on the remote task')
      const settled = (await send(app, 'GET', `/api/runs/${run.id}/tool-calls`)).json().data[0]
      assert.equal(settled.status, 'succeeded')
      assert.match(settled.output, /^approved by /)
    })

    it('denied: "denied by @h: note" goes back; the call stays denied', async () => {
      const { run, call, taskId } = await authorizing()
      const decided = await send(app, 'POST', `/api/runs/${run.id}/tool-calls/${call.id}/decision`, { decision: 'deny', note: 'keep them' })
      assert.equal(decided.statusCode, 200, decided.body)
      const done = await runIn(app, run.id, ['succeeded', 'failed'], 30000)
      assert.match(done.phases[0].output.text, /^answer was: denied by @?\S+: keep them$/)
      assert.equal(replies(taskId).length, 1)
      assert.equal((await send(app, 'GET', `/api/runs/${run.id}/tool-calls`)).json().data[0].status, 'denied')
    })
  })
}
