// A delivery that comes while another holds the task's lease (on PostgreSQL: one look at a time) proceeds once that
// look ends, not a lease's length later (TANDEM_DISPATCH_TIMEOUT_MS + 5 s) nor after the poll's interval; nothing is
// sent twice. SQLite has no lease: the second delivery either looks at once beside the first, or still waits in the
// queue when the first ends, and then the next look is due at once. Against an SDK-built remote A2A agent that keeps its task working, whose looks (GetTask) the test
// holds; the poll's interval is ten minutes, so every look seen is one the code under test asked for.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import pg from 'pg'
import type { FastifyInstance } from 'fastify'
import { build, dialects } from '../helpers.js'
import { waitFor } from '../wait.js'
import { pendingJobs } from '../clock.js'
import { enqueueJob } from '../../src/jobs/index.js'
import { DELIVER_TASK_JOB, deliveryKey, type DeliveryJob } from '../../src/runs/machine/jobs.js'
import { createAgent, createCycle, createStream, runIn, startRun } from '../runs/setup.js'
import { startRemoteAgent, type RemoteAgent } from './remote-agent.js'

/** Well under the dispatch time-out (30 s) and the poll's interval (10 min): a look that waited for either fails. */
const PROMPTLY_MS = 5000

for (const dialect of dialects()) {
  describe(`a delivery that finds the task's lease held (${dialect})`, () => {
    let app: FastifyInstance
    let remote: RemoteAgent
    let streamId: string
    let cycleId: string

    before(async () => {
      app = await build(dialect, { TANDEM_WORKERS: '4', TANDEM_EGRESS_ALLOW: '127.0.0.0/8', TANDEM_POLL_INTERVAL_MS: '600000', TANDEM_TASK_TIMEOUT_S: '300' }, { ownDatabase: true })
      remote = await startRemoteAgent('work')
      streamId = await createStream(app)
      const agentId = await createAgent(app, { name: 'Worker', providerType: 'custom_webhook', endpointUrl: remote.cardUrl, config: { protocol: 'a2a' } })
      cycleId = await createCycle(app, streamId, [{ agentId, name: 'Work' }], 'work')
    })
    after(async () => {
      await app.close()
      await remote.close()
    })

    const looks = () => remote.calls.filter((c) => c.method === 'GetTask').length

    /** A run whose remote task is working: its message sent, its next look queued ten minutes out. */
    async function working() {
      const sent = remote.received.length
      const run = await startRun(app, streamId, cycleId)
      const task = await app.database.db.selectFrom('run_tasks').select('id').where('run_id', '=', run.id).executeTakeFirstOrThrow()
      const [next] = await waitFor(async () => {
        const jobs = await pendingJobs(app, deliveryKey(task.id))
        return jobs.length === 1 && (jobs[0]!.payload as DeliveryJob).poll ? jobs : undefined
      }, { what: 'the look after the message, queued' })
      const look = next!.payload as DeliveryJob
      // What a decision's look is (resumeClocks, src/a2a/remote-clock.ts): in the transaction that changes the task's
      // row, a delivery of the task under its key, due now.
      const deliver = () =>
        app.database.db.transaction().execute(async (trx) => {
          await trx.updateTable('run_tasks').set({ clock_paused_at: null }).where('id', '=', task.id).execute()
          await enqueueJob(trx, DELIVER_TASK_JOB, { ...look, dispatch: 1 }, { jobKey: deliveryKey(task.id) })
        })
      return { run, taskId: task.id, deliver, sent }
    }

    /** The remote finishes; a look settles the task; the run succeeds with the one answer, sent for once. */
    async function finishes(runId: string, deliver: () => Promise<void>, sent: number) {
      remote.finish('all done')
      await deliver()
      const done = await runIn(app, runId, ['succeeded', 'failed'], 15000)
      assert.equal(done.status, 'succeeded', JSON.stringify(done.phases[0].error))
      assert.equal(done.phases[0].output.text, 'all done')
      assert.equal(done.phases[0].attempts, 1)
      assert.equal(remote.received.length - sent, 1, 'the task was sent to the remote once')
    }

    it('the delivery that waited runs at once when the look holding the lease ends', async () => {
      const { run, taskId, deliver, sent } = await working()
      const before = looks()
      const letGo = remote.holdNextLook()
      await deliver()
      await waitFor(() => looks() === before + 1, { what: 'a look, held by the remote while it holds the lease' })
      await deliver()
      if (dialect === 'postgres') {
        // The second delivery found the lease held: it left its watchdog for when the lease ends (a lease's length out).
        await waitFor(async () => (await pendingJobs(app, deliveryKey(taskId))).some((job) => Date.parse(job.runAt) - Date.now() > 20_000), { what: 'the watchdog of the delivery that found the lease held' })
      }
      const released = Date.now()
      letGo()
      await waitFor(() => looks() >= before + 2, { timeoutMs: PROMPTLY_MS, what: 'the look of the delivery that waited, soon after the lease was released' })
      assert.ok(Date.now() - released < PROMPTLY_MS)
      await finishes(run.id, deliver, sent)
    })

    if (dialect === 'postgres') {
      it('a watchdog added as the holder releases the lease never puts back the look the release queued', async () => {
        const { run, taskId, deliver, sent } = await working()
        const client = new pg.Client({ connectionString: app.config.databaseUrl })
        await client.connect()
        const jobs = client.escapeIdentifier(app.database.schema ? `${app.database.schema}_jobs` : 'graphile_worker')
        try {
          // A watchdog's add_job (its run_at a lease's length out) waits on an advisory lock this test holds: the
          // second delivery has seen the lease held, and stops just before its watchdog is written.
          await client.query('select pg_advisory_lock(4242003)')
          await client.query(`create function ${jobs}.hold_watchdogs() returns trigger language plpgsql as $$ begin
            if new.run_at between now() + interval '20 seconds' and now() + interval '60 seconds' then perform pg_advisory_xact_lock_shared(4242003); end if;
            return new;
          end $$`)
          await client.query(`create trigger hold_watchdogs before insert on ${jobs}._private_jobs for each row execute function ${jobs}.hold_watchdogs()`)
          const before = looks()
          const letGo = remote.holdNextLook()
          await deliver()
          await waitFor(() => looks() === before + 1, { what: 'a look, held by the remote while it holds the lease' })
          await deliver()
          const waitsOn = async (kinds: string, query: string) =>
            (await client.query(`select 1 from pg_locks l join pg_stat_activity a using (pid) where l.locktype in (${kinds}) and not l.granted and a.query like $1`, [`%${query}%`])).rows.length > 0
          await waitFor(() => waitsOn(`'advisory'`, 'add_job'), { what: 'the second delivery, its watchdog about to be written' })
          // The look ends and releases the lease: its release waits for the task's row, which the watchdog's
          // transaction holds, then sees the watchdog and replaces it with a look due now. (Were it not to wait, it
          // would queue its next look ten minutes out, and the watchdog then move that look a lease's length out.)
          letGo()
          const nextLookQueued = async () => (await pendingJobs(app, deliveryKey(taskId))).some((job) => Date.parse(job.runAt) - Date.now() > 300_000)
          await waitFor(async () => (await waitsOn(`'transactionid', 'tuple'`, 'run_tasks')) || (await nextLookQueued()), { what: 'the release, waiting for the watchdog\'s transaction' })
          const released = Date.now()
          await client.query('select pg_advisory_unlock(4242003)')
          await waitFor(() => looks() >= before + 2, { timeoutMs: PROMPTLY_MS, what: 'the next look, soon after the lease was released' })
          assert.ok(Date.now() - released < PROMPTLY_MS)
        } finally {
          await client.query(`drop trigger if exists hold_watchdogs on ${jobs}._private_jobs`)
          await client.query('select pg_advisory_unlock_all()')
          await client.end()
        }
        await finishes(run.id, deliver, sent)
        assert.equal((await pendingJobs(app, deliveryKey(taskId))).length, 0, 'no delivery of the settled task is left')
      })
    }
  })
}
