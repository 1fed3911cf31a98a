// test lane: clock — server processes killed (SIGKILL) and restarted (scripts/test.mjs).
// A server killed (SIGKILL) while a decision timer's job is taking effect: after the restart the reminder takes
// effect exactly once, and a restart after that adds none. The kill lands while the effect is held up by a lock
// the test takes: PostgreSQL — a row lock on the run (withLockedRun waits on it), so the timer's job is running,
// locked by the dead worker, when the process dies; SQLite — the database's write lock, so the worker is blocked
// taking the job when it dies (one writer per file: the job and its effect cannot be parted any finer).
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { request, serverGroup } from '../child-server.js'
import { dialects, freshDatabase } from '../helpers.js'
import { holdLock, someoneWaitsOnALock } from '../hold-lock.js'
import { queuedJobs, queueSettled } from '../queue.js'
import { waitFor } from '../wait.js'

const NIL = '00000000-0000-0000-0000-000000000000'
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

for (const dialect of dialects()) {
  describe(`decision timers survive a SIGKILL mid-effect (${dialect})`, () => {
    it('the reminder takes effect once after the restart, and never again', { timeout: 120000 }, async () => {
      const database = await freshDatabase(dialect, { ownDatabase: true })
      const servers = serverGroup({ DATABASE_URL: database.url, TANDEM_AUTH: 'local' })
      let release: (() => Promise<void>) | undefined
      const reminders = async (base: string, streamId: string) =>
        ((await request(base, 'GET', `/api/streams/${streamId}/events?limit=100`)).json.data as any[]).filter((e) => e.type === 'decision.reminder')
      try {
        const base = await servers.start().url
        const streamId = (await request(base, 'POST', '/api/streams', { name: 'crash' })).json.id
        const phase = { id: randomUUID(), agentId: NIL, goal: 'g', instructions: 'i', autoAdvance: false, phaseName: 'Review', operatorPool: [] }
        const saved = await request(base, 'POST', `/api/cycles/streams/${streamId}/cycles`, { triggerName: 'pay', description: 'd', phasesTemplate: [phase], policy: { decision: { remindAfter: 'PT5S' } } })
        assert.equal(saved.status, 201)
        const [started] = (await request(base, 'POST', `/api/streams/${streamId}/triggers/pay`, {})).json.runs
        const run = (await request(base, 'GET', `/api/runs/${started.id}`)).json
        const remindAt = Date.parse(run.phases[0].deadlines.remindAt)
        release = await holdLock(dialect, database.url, { table: 'runs', id: run.id })
        // Past the reminder's time: the job is held up by the lock.
        if (dialect === 'postgres') {
          await waitFor(() => someoneWaitsOnALock(database.url), { timeoutMs: remindAt - Date.now() + 15000, what: 'the reminder\'s job to wait on the held run' })
        } else {
          // The reminder falls due on the real clock; a worker waiting for SQLite's write lock shows nowhere outside its process.
          await sleep(remindAt - Date.now() + 2500)
        }
        await servers.stopAll('SIGKILL')
        await release()
        release = undefined

        const restartedAt = new Date()
        const again = await servers.start().url
        await waitFor(async () => (await reminders(again, streamId)).length > 0, { timeoutMs: 30000, what: 'the reminder after the restart' })
        // Until no timer of the run can run any more (a job taken before the restart was the dead server's).
        await waitFor(() => queueSettled(database.url, 'decision.timer', run.id, restartedAt), { what: 'the run\'s timers to settle after the restart' })
        assert.equal((await reminders(again, streamId)).length, 1, 'one reminder, not two')

        // Killed again after the effect committed: the next start re-arms nothing that took effect.
        await servers.stopAll('SIGKILL')
        const thirdAt = new Date()
        const third = await servers.start().url
        await waitFor(() => queueSettled(database.url, 'decision.timer', run.id, thirdAt), { what: 'the run\'s timers to settle after the third start' })
        assert.deepEqual((await queuedJobs(database.url, 'decision.timer', run.id)).filter((job) => job.lockedAt === null), [], 'no timer re-armed')
        assert.equal((await reminders(third, streamId)).length, 1)
        const waiting = (await request(third, 'GET', `/api/runs/${run.id}`)).json
        assert.equal(waiting.status, 'waiting', 'a reminder decides nothing')
      } finally {
        await release?.()
        await servers.stopAll('SIGKILL')
        await database.drop()
      }
    })
  })
}
