// The task tool route for agents Tandem does not run a model loop for (custom_token_only here, custom_webhook
// gets the same payload), on both databases against a real MCP server: the payload's `tools` and `toolsUrl`,
// a call made at once (200), a call that needs an approval (202, the phase waits, the approval makes it once by
// a job, the long-poll read sees it settle), a question answered by an operator, and the refusals: a tool the
// agent does not have, bad input, another task's token, a closed task; entries naming no tool are warnings.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { finishCall } from '../../src/runs/tool-calls/exec.js'
import { build, dialects, send } from '../helpers.js'
import { startFakeMcpServer, type FakeMcpServer } from '../fakes/mcp-server.js'
import { createAgent, createCycle, createStream, getRun, runIn, startRun } from './setup.js'
import { waitFor } from './agent-server.js'
import { bearer, createKey } from '../auth.js'
import { itReadsNoWholeGrowingTable, watchFullScans, type FullScans } from '../db/full-scans.js'

const local = (url: string) => url.replace(/^https?:\/\/[^/]+/, '')

for (const dialect of dialects()) {
  describe(`task tool route (${dialect})`, () => {
    let app: FastifyInstance
    let files: FakeMcpServer
    let streamId: string
    let agentId: string
    let agentKey: string
    let maria: { authorization: string }
    let scans: FullScans | null

    before(async () => {
      app = await build(dialect, { TANDEM_WORKERS: '4', TANDEM_EGRESS_ALLOW: '127.0.0.0/8' }, { ownDatabase: true })
      scans = watchFullScans(app)
      files = await startFakeMcpServer()
      assert.equal((await send(app, 'POST', '/api/mcp-servers', { name: 'files', url: files.url, approval: { 'delete_*': 'always' } })).statusCode, 201)
      const workspaceId = (await send(app, 'GET', '/api/me')).json().workspaceId
      agentId = await createAgent(app, { providerType: 'custom_token_only', capabilities: { streaming: false, tools: ['files.echo', 'files.delete_file', 'tandem.ask_operator', 'nothing'] } })
      agentKey = (await createKey(app, { workspaceId, name: 'worker', agentId })).key
      maria = (await createKey(app, { workspaceId, name: 'Maria', handle: 'maria' })).headers
      streamId = await createStream(app)
    })
    after(async () => {
      await app.close()
      await files.close()
    })

    /** A run for the agent, its task claimed: the payload. */
    async function claimed(): Promise<any> {
      const run = await startRun(app, streamId, await createCycle(app, streamId, [{ agentId, operatorPool: ['@maria'] }], `t-${Math.random()}`))
      const payload: any = await waitFor(async () => {
        const res = await send(app, 'POST', '/api/tasks/claim', {}, bearer(agentKey))
        return res.statusCode === 200 ? res.json() : undefined
      })
      assert.equal(payload.run.id, run.id)
      return payload
    }
    const asAgent = (payload: any) => bearer(payload.result.token)

    it('the payload lists the tools and toolsUrl; a call needing no one is made at once', async () => {
      const payload = await claimed()
      assert.deepEqual(payload.tools.map((t: any) => t.name), ['files.echo', 'files.delete_file', 'tandem.ask_operator'])
      assert.equal(local(payload.toolsUrl), `/api/tasks/${payload.task.id}/tools`)
      const res = await send(app, 'POST', `${local(payload.toolsUrl)}/files.echo`, { input: { text: 'hello' } }, asAgent(payload))
      assert.equal(res.statusCode, 200, res.body)
      assert.deepEqual({ status: res.json().status, output: res.json().output, error: res.json().error }, { status: 'succeeded', output: 'echo: hello', error: null })
      const byKey = await send(app, 'POST', `${local(payload.toolsUrl)}/files.echo`, { input: { text: 'key' } }, bearer(agentKey))
      assert.equal(byKey.statusCode, 200, byKey.body)
      const run = await getRun(app, payload.run.id)
      assert.match(run.phases[0].warnings[0], /"nothing" names no tool/)
      const list = (await send(app, 'GET', `/api/runs/${payload.run.id}/tool-calls`)).json().data
      assert.deepEqual(list.map((c: any) => [c.name, c.status]), [['files.echo', 'succeeded'], ['files.echo', 'succeeded']])
    })

    it('a call needing an approval: 202, the phase waits, the approval makes it once, the read sees it settle; then the answer', async () => {
      const payload = await claimed()
      const res = await send(app, 'POST', `${local(payload.toolsUrl)}/files.delete_file`, { input: { path: '/task/x' } }, asAgent(payload))
      assert.equal(res.statusCode, 202, res.body)
      assert.equal(res.json().status, 'awaiting_approval')
      const callUrl = `/api/tasks/${payload.task.id}/tool-calls/${res.json().callId}`
      assert.equal((await send(app, 'GET', `${callUrl}?waitSeconds=0`, undefined, asAgent(payload))).json().status, 'awaiting_approval')
      const waiting = await getRun(app, payload.run.id)
      assert.deepEqual([waiting.status, waiting.phases[0].status], ['waiting', 'awaiting_tool_approval'])
      // An answer (or an error) while the call waits for its approval would be lost with the call: 409, nothing changed.
      for (const body of [{ output: { text: 'too early' } }, { error: { detail: 'giving up' } }]) {
        const early = await send(app, 'POST', local(payload.result.url), body, asAgent(payload))
        assert.equal(early.statusCode, 409, early.body)
        assert.equal(early.json().type, 'urn:tandem:problem:tool-call-awaiting-approval')
        assert.match(early.json().detail, new RegExp(res.json().callId))
      }
      assert.deepEqual([(await getRun(app, payload.run.id)).phases[0].status, (await send(app, 'GET', `${callUrl}?waitSeconds=0`, undefined, asAgent(payload))).json().status], ['awaiting_tool_approval', 'awaiting_approval'])
      const reading = send(app, 'GET', `${callUrl}?waitSeconds=20`, undefined, asAgent(payload))
      const decided = await send(app, 'POST', `/api/runs/${payload.run.id}/tool-calls/${res.json().callId}/decision`, { decision: 'approve' }, maria)
      assert.equal(decided.statusCode, 200, decided.body)
      const settled = (await reading).json()
      assert.deepEqual([settled.status, settled.output], ['succeeded', 'deleted /task/x'])
      assert.equal(files.calls.filter((c) => (c.arguments as any).path === '/task/x').length, 1)
      assert.equal((await getRun(app, payload.run.id)).phases[0].status, 'running')
      const answered = await send(app, 'POST', local(payload.result.url), { output: { text: 'deleted it' } }, asAgent(payload))
      assert.equal(answered.statusCode, 200, answered.body)
      await runIn(app, payload.run.id, 'succeeded')
      const late = await send(app, 'POST', `${local(payload.toolsUrl)}/files.echo`, { input: { text: 'late' } }, asAgent(payload))
      assert.equal(late.statusCode, 409)
    })

    it('a denied call is settled as denied with who and why', async () => {
      const payload = await claimed()
      const res = await send(app, 'POST', `${local(payload.toolsUrl)}/files.delete_file`, { input: { path: '/task/y' } }, asAgent(payload))
      await send(app, 'POST', `/api/runs/${payload.run.id}/tool-calls/${res.json().callId}/decision`, { decision: 'deny', note: 'keep it' }, maria)
      const read = (await send(app, 'GET', `/api/tasks/${payload.task.id}/tool-calls/${res.json().callId}?waitSeconds=5`, undefined, asAgent(payload))).json()
      assert.deepEqual([read.status, read.error], ['denied', 'denied by @maria: keep it'])
      assert.equal(files.calls.filter((c) => (c.arguments as any).path === '/task/y').length, 0)
    })

    it('tandem.ask_operator: 202, the phase awaits input, the answer is the output', async () => {
      const payload = await claimed()
      const res = await send(app, 'POST', `${local(payload.toolsUrl)}/tandem.ask_operator`, { input: { question: 'Which file?' } }, asAgent(payload))
      assert.equal(res.statusCode, 202, res.body)
      const run = await getRun(app, payload.run.id)
      assert.equal(run.phases[0].status, 'awaiting_input')
      const answer = await send(app, 'POST', `/api/runs/${payload.run.id}/phases/${run.phases[0].id}/answer`, { text: 'the old one' }, maria)
      assert.equal(answer.statusCode, 200, answer.body)
      const read = (await send(app, 'GET', `/api/tasks/${payload.task.id}/tool-calls/${res.json().callId}`, undefined, asAgent(payload))).json()
      assert.deepEqual([read.status, read.output], ['succeeded', 'the old one'])
      assert.equal((await getRun(app, payload.run.id)).phases[0].status, 'running')
    })

    it('a call in flight when its task ends (a crash) is settled as failed, interrupted; a late finish leaves it so', async () => {
      const payload = await claimed()
      const res = await send(app, 'POST', `${local(payload.toolsUrl)}/files.echo`, { input: { text: 'lost' } }, asAgent(payload))
      const callId = res.json().callId
      // The run is marked as one with such calls (0070), under its lock: only such runs are looked at when a phase ends.
      const marked = async (runId: string) => Number((await app.database.db.selectFrom('runs').select('route_calls').where('id', '=', runId).executeTakeFirstOrThrow()).route_calls)
      assert.equal(await marked(payload.run.id), 1)
      assert.equal(await marked((await claimed()).run.id), 0, 'a run whose agent called no tool is not marked')
      // As a process killed while making it leaves it: dispatched, never finished.
      await app.database.db.updateTable('tool_calls').set({ status: 'running', output: null, finished_at: null }).where('id', '=', callId).execute()
      assert.equal((await send(app, 'POST', local(payload.result.url), { output: { text: 'done' } }, asAgent(payload))).statusCode, 200)
      await runIn(app, payload.run.id, 'succeeded')
      const list = (await send(app, 'GET', `/api/runs/${payload.run.id}/tool-calls`)).json().data
      assert.deepEqual([list[0].status, list[0].error.startsWith('interrupted:')], ['failed', true])
      const row = await app.database.db.selectFrom('tool_calls').selectAll().where('id', '=', callId).executeTakeFirstOrThrow()
      const run = await getRun(app, payload.run.id)
      const late = await finishCall(app, { workspaceId: row.workspace_id, run, agentId, traceparent: null }, row, { ok: true, output: 'late' })
      assert.equal(late.status, 'failed', 'a late finish does not overwrite the settled call')
    })

    it('refusals: a tool it does not have 404, bad input 400 with /input, another task\'s token 401', async () => {
      const payload = await claimed()
      const other = await claimed()
      const url = local(payload.toolsUrl)
      assert.equal((await send(app, 'POST', `${url}/files.huge`, { input: {} }, asAgent(payload))).statusCode, 404)
      const notObject = await send(app, 'POST', `${url}/files.echo`, { input: [1] }, asAgent(payload))
      assert.equal(notObject.statusCode, 400)
      assert.equal(notObject.json().errors[0].pointer, '/input')
      const big = await send(app, 'POST', `${url}/files.echo`, { input: { text: 'x'.repeat(64 * 1024) } }, asAgent(payload))
      assert.equal(big.statusCode, 400)
      assert.match(big.json().errors[0].detail, /at most 65536 bytes/)
      assert.equal((await send(app, 'POST', `${url}/files.echo`, { input: { text: 'a' } }, asAgent(other))).statusCode, 401)
      assert.equal((await send(app, 'POST', `${url}/files.echo`, { input: { text: 'a' } })).statusCode, 401)
    })

    // Last: after every flow above (approvals, a question, the inbox's reads, the clocks), what they read.
    if (dialect === 'sqlite') itReadsNoWholeGrowingTable(() => scans)
  })
}
