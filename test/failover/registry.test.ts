// The instance registry's sweep, in process (src/failover/registry.ts): which locks it frees and which rows it
// deletes, told apart by the heartbeat alone. PostgreSQL for the jobs (graphile-worker's), both databases for
// the liveness that idempotency claims are judged by.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { sql } from 'kysely'
import { build, dialects } from '../helpers.js'
import { InstanceRegistry, failoverTimings } from '../../src/failover/registry.js'

const BOUND_MS = 6000

describe('failover timings', () => {
  it('beat every sixth of the bound, dead after half of it', () => {
    assert.deepEqual(failoverTimings(60_000), { heartbeatMs: 10_000, staleMs: 30_000 })
    assert.deepEqual(failoverTimings(6_000), { heartbeatMs: 1_000, staleMs: 3_000 })
  })
})

for (const dialect of dialects()) {
  describe(`instance registry (${dialect})`, () => {
    it('an instance is alive while it beats; a silent one is dead, its row swept', async () => {
      const app = await build(dialect, { TANDEM_FAILOVER_S: String(BOUND_MS / 1000) })
      const { db } = app.database
      try {
        assert.equal(await app.instances.isAlive(app.instances.id), true, 'this instance')
        const other = new InstanceRegistry({ db, dialect, boundMs: BOUND_MS, log: app.log })
        await other.start(null)
        await other.stop() // stopped cleanly: its row is gone
        assert.equal(await app.instances.isAlive(other.id), false)
        const silent = new InstanceRegistry({ db, dialect, boundMs: BOUND_MS, log: app.log })
        await silent.start(null)
        assert.equal(await app.instances.isAlive(silent.id), true)
        // Its heartbeat stops (as a SIGKILL stops it): aged past the stale time.
        await (silent as unknown as { timer: NodeJS.Timeout }).timer.close()
        await db.updateTable('instances').set({ heartbeat_ms: Date.now() - 3_500 }).where('id', '=', silent.id).execute()
        assert.equal(await app.instances.isAlive(silent.id), false)
        const swept = await app.instances.sweep()
        assert.equal(swept.dead, 1)
        assert.equal(await db.selectFrom('instances').select('id').where('id', '=', silent.id).executeTakeFirst(), undefined)
        assert.ok(await db.selectFrom('instances').select('id').where('id', '=', app.instances.id).executeTakeFirst(), 'the live row stays')
      } finally {
        await app.close()
      }
    })
  })
}

for (const dialect of dialects().filter((d) => d === 'postgres')) {
  describe(`instance registry frees dead pools' jobs (${dialect})`, () => {
    it('unlocks the jobs of a dead instance, and of a pool no instance names, never a live one\'s', async () => {
      const app = await build(dialect, { TANDEM_FAILOVER_S: String(BOUND_MS / 1000) })
      const { db } = app.database
      const jobs = sql.id(`${app.database.schema}_jobs`)
      try {
        const live = new InstanceRegistry({ db, dialect, boundMs: BOUND_MS, log: app.log, jobsSchema: `${app.database.schema}_jobs` })
        await live.start('pool-live')
        const dead = new InstanceRegistry({ db, dialect, boundMs: BOUND_MS, log: app.log, jobsSchema: `${app.database.schema}_jobs` })
        await dead.start('pool-dead')
        await (dead as unknown as { timer: NodeJS.Timeout }).timer.close()
        await db.updateTable('instances').set({ heartbeat_ms: Date.now() - 10_000 }).where('id', '=', dead.id).execute()
        // Four jobs, each locked 10 s ago (older than the stale time): by the live pool, the dead one, a pool no
        // row names (its instance died before writing it), and one locked just now by an unnamed pool.
        for (const key of ['live', 'dead', 'unnamed', 'fresh']) await sql`select ${jobs}.add_job('test.noop', '{}'::json, job_key => ${key})`.execute(db)
        const lock = (key: string, pool: string, ago: string) => sql`update ${jobs}._private_jobs set locked_by = ${pool}, locked_at = now() - ${ago}::interval where key = ${key}`.execute(db)
        await lock('live', 'pool-live', '10 seconds')
        await lock('dead', 'pool-dead', '10 seconds')
        await lock('unnamed', 'pool-unnamed', '10 seconds')
        await lock('fresh', 'pool-starting', '0 seconds')
        const swept = await app.instances.sweep()
        assert.deepEqual(swept.unlockedPools.sort(), ['pool-dead', 'pool-unnamed'])
        const { rows } = await sql<{ key: string; locked_by: string | null }>`select key, locked_by from ${jobs}._private_jobs order by key`.execute(db)
        assert.deepEqual(rows, [
          { key: 'dead', locked_by: null },
          { key: 'fresh', locked_by: 'pool-starting' },
          { key: 'live', locked_by: 'pool-live' },
          { key: 'unnamed', locked_by: null },
        ])
        await live.stop()
      } finally {
        await app.close()
      }
    })
  })
}
