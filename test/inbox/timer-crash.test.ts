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
import { holdLock } from '../hold-lock.js'
import { waitFor } from '../runs/agent-server.js'

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
        // Past the reminder's time (and PostgreSQL's 1 s poll): the job is held up by the lock.
        await sleep(remindAt - Date.now() + 2500)
        await servers.stopAll('SIGKILL')
        await release()
        release = undefined

        const again = await servers.start().url
        await waitFor(async () => ((await reminders(again, streamId)).length > 0 ? true : undefined), 30000, 'the reminder after the restart')
        await sleep(2500)
        assert.equal((await reminders(again, streamId)).length, 1, 'one reminder, not two')

        // Killed again after the effect committed: the next start re-arms nothing that took effect.
        await servers.stopAll('SIGKILL')
        const third = await servers.start().url
        await sleep(3000)
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
