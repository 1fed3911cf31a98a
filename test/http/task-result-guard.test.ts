// POST /api/tasks/{id}/result, the one /api route authenticated by a task's token rather than an API key:
// it spends the same rate-limit budgets as every /api route, and every credential that does not answer the task —
// made up, of another agent, for a task that does not exist — gets one and the same 401, so its answers tell neither
// a valid key nor a task id from a guess. A known task's old token still gets its 409 task-closed.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { waitFor } from '../runs/agent-server.js'
import { createAgent, createCycle, createStream, startRun } from '../runs/setup.js'
import { bearer, createKey } from '../auth.js'

const answer = (app: FastifyInstance, taskId: string, credential: string) =>
  send(app, 'POST', `/api/tasks/${taskId}/result`, { output: { text: 'done' } }, bearer(credential))

for (const dialect of dialects()) {
  describe(`the task-result route behind the rate limit (${dialect})`, () => {
    let app: FastifyInstance
    before(async () => {
      app = await build(dialect, { TANDEM_AUTH: 'required', TANDEM_PEER_RATE_LIMIT: '20/minute' })
    })
    after(() => app.close())

    it('guessing keys meets a 429 once the peer budget is spent', async () => {
      const statuses: number[] = []
      for (let i = 0; i < 25; i++) statuses.push((await answer(app, randomUUID(), `tdm_guess${i}`)).statusCode)
      assert.deepEqual(statuses.slice(0, 20), Array(20).fill(401))
      assert.deepEqual(statuses.slice(20), Array(5).fill(429))
      const limited = await answer(app, randomUUID(), 'tdt_guess')
      assert.equal(limited.json().type, 'urn:tandem:problem:rate-limited')
      assert.match(String(limited.headers['retry-after']), /^\d+$/)
    })
  })

  describe(`the task-result route answers every wrong credential alike (${dialect})`, () => {
    let app: FastifyInstance
    let task: { id: string; token: string }
    let agentKey: string
    let otherAgentKey: string
    let memberKey: string
    before(async () => {
      app = await build(dialect, { TANDEM_EGRESS_ALLOW: '127.0.0.0/8' }, { ownDatabase: true })
      const streamId = await createStream(app)
      const agentId = await createAgent(app, { providerType: 'custom_token_only' })
      const otherAgentId = await createAgent(app, { name: 'Other', providerType: 'custom_token_only' })
      const workspaceId = (await send(app, 'GET', '/api/me')).json().workspaceId
      agentKey = (await createKey(app, { workspaceId, name: 'claimer', agentId })).key
      otherAgentKey = (await createKey(app, { workspaceId, name: 'other claimer', agentId: otherAgentId })).key
      memberKey = (await createKey(app, { workspaceId, name: 'A member' })).key
      await startRun(app, streamId, await createCycle(app, streamId, [{ agentId }]))
      const claimed: any = await waitFor(async () => {
        const res = await send(app, 'POST', '/api/tasks/claim', {}, bearer(agentKey))
        return res.statusCode === 200 ? res.json() : undefined
      })
      task = { id: claimed.task.id, token: claimed.result.token }
    })
    after(() => app.close())

    it('one 401 for a made-up key, a key of another agent, a member key, and any key on an unknown task', async () => {
      const unknown = randomUUID()
      const attempts = [
        answer(app, task.id, 'tdm_made-up-key'),
        answer(app, task.id, 'tdt_made-up-token'),
        answer(app, task.id, otherAgentKey),
        answer(app, task.id, memberKey),
        answer(app, unknown, 'tdm_made-up-key'),
        answer(app, unknown, agentKey),
        answer(app, unknown, otherAgentKey),
        answer(app, unknown, task.token),
        answer(app, 'not-a-task-id', agentKey),
      ]
      const bodies = (await Promise.all(attempts)).map((res) => {
        const { type, title, status, detail } = res.json()
        return { code: res.statusCode, type, title, status, detail, challenge: res.headers['www-authenticate'] }
      })
      for (const body of bodies) assert.deepEqual(body, bodies[0])
      assert.equal(bodies[0]?.code, 401)
    })

    it('the right token answers; afterwards it gets 409 task-closed', async () => {
      assert.equal((await answer(app, task.id, task.token)).statusCode, 200)
      const again = await answer(app, task.id, task.token)
      assert.equal(again.statusCode, 409)
      assert.equal(again.json().type, 'urn:tandem:problem:task-closed')
    })
  })
}
