// A task's time-out job is keyed by the task (timeout:<taskId>) and removed when the task settles: a run that
// succeeds, and one that is canceled, leave no time-out job behind to fire later as a no-op. A push task gets it
// from its delivery once the agent accepted it (a task answered in the delivery's response never needs one).
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { sql } from 'kysely'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { startAgentServer } from './agent-server.js'
import { createAgent, createCycle, createStream, runIn, startRun } from './setup.js'
import { waitFor } from '../wait.js'

async function timeoutJobs(app: FastifyInstance): Promise<number> {
  const { db, dialect } = app.database
  const query =
    dialect === 'sqlite'
      ? sql<{ n: number }>`select count(*) as n from jobs where job_key like 'timeout:%'`
      : sql<{ n: number }>`select count(*)::int as n from graphile_worker.jobs where key like 'timeout:%'`
  return Number((await query.execute(db)).rows[0]?.n ?? 0)
}

for (const dialect of dialects()) {
  describe(`task time-out jobs (${dialect})`, () => {
    it('are removed when the task is answered or canceled', { timeout: 60000 }, async () => {
      const app = await build(dialect, { TANDEM_EGRESS_ALLOW: '127.0.0.0/8' }, { ownDatabase: true })
      const answering = await startAgentServer(() => ({ status: 200, body: { output: { text: 'done' } } }))
      const slow = await startAgentServer(() => ({ status: 202 }))
      try {
        const streamId = await createStream(app)
        const done = await startRun(app, streamId, await createCycle(app, streamId, [{ agentId: await createAgent(app, { endpointUrl: answering.url }) }]))
        await runIn(app, done.id, 'succeeded')
        const waiting = await startRun(app, streamId, await createCycle(app, streamId, [{ agentId: await createAgent(app, { endpointUrl: slow.url }) }], 'other'))
        await runIn(app, waiting.id, 'running')
        await waitFor(() => slow.deliveries.length > 0, { what: 'the delivery' })
        // The delivery arms the time-out once the agent accepted the task (202): wait for it.
        await waitFor(async () => (await timeoutJobs(app)) > 0, { what: 'the time-out job' })
        assert.equal(await timeoutJobs(app), 1, 'the open task has its time-out job')
        assert.equal((await send(app, 'POST', `/api/runs/${waiting.id}/cancel`)).statusCode, 200)
        assert.equal(await timeoutJobs(app), 0, 'no time-out job outlives its task')
      } finally {
        await app.close()
        await answering.close()
        await slow.close()
      }
    })

    it('fail an accepted push task nobody answers, with agent-timeout, once TANDEM_TASK_TIMEOUT_S has passed', { timeout: 60000 }, async () => {
      const app = await build(dialect, { TANDEM_EGRESS_ALLOW: '127.0.0.0/8', TANDEM_TASK_TIMEOUT_S: '1' }, { ownDatabase: true })
      const slow = await startAgentServer(() => ({ status: 202 }))
      try {
        const streamId = await createStream(app)
        const run = await startRun(app, streamId, await createCycle(app, streamId, [{ agentId: await createAgent(app, { endpointUrl: slow.url }) }]))
        const failed = await runIn(app, run.id, 'failed', 20000)
        assert.match(String(failed.error?.type), /agent-timeout/)
        assert.equal(slow.deliveries.length, 1, 'delivered once, then timed out')
        assert.equal(await timeoutJobs(app), 0, 'the time-out job is gone once it ran')
      } finally {
        await app.close()
        await slow.close()
      }
    })
  })
}
