// Which instances are alive, and taking over the work of those that are not (docs/operations.md "Failover").
//
// Every instance writes a heartbeat into `instances` every sixth of the failover bound (TANDEM_FAILOVER_S,
// default 60 s); one silent for half the bound is dead. Each instance also sweeps, at the same pace:
//
//   - a dead instance's row is deleted, and graphile-worker's own `force_unlock_workers` frees the jobs its
//     worker pool had locked (a delivery locked but not yet leased, a schedule's tick, a decision timer, a
//     message trigger, a webhook delivery): they are due again at once, and the next poll of any live instance
//     takes them. Every handler is safe to run again (a job is at least once; its effect is once: schedules
//     compare-and-set their tick, clocks record their effect, deliveries lease under the run's lock).
//   - a job locked for half the bound by a pool no live instance owns is freed the same way: the instance died
//     before its row named its pool (graphile-worker locks its first jobs as it starts), or it was never seen.
//
// So a dead instance's work is taken over within about two thirds of the bound, whether or not anything
// restarts. graphile-worker 0.17 has no heartbeats of its own (its only sweep frees locks after four hours);
// the heartbeat row is the one thing added, and unlocking is graphile-worker's. An instance that was only slow
// (a heartbeat missed for half the bound) finds its row gone, writes it again and logs a warning: jobs it was
// still running may then run twice, which at-least-once handlers allow.
//
// An idempotency claim names the instance carrying the request out; a claim whose instance is not alive is
// released at once (src/http/idempotency.ts), not after the request time-out.
import { randomUUID } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import { sql, type Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import type { DialectName } from '../db/connect.js'

export interface FailoverTimings {
  /** How often the heartbeat is written and dead instances swept. */
  heartbeatMs: number
  /** Silent this long: dead. */
  staleMs: number
}

/** The heartbeat's pace and the silence that means death, for a failover bound. */
export function failoverTimings(boundMs: number): FailoverTimings {
  return { heartbeatMs: Math.max(100, Math.floor(boundMs / 6)), staleMs: Math.max(300, Math.floor(boundMs / 2)) }
}

export interface InstanceRegistryOptions {
  db: Kysely<Database>
  dialect: DialectName
  /** TANDEM_FAILOVER_S in milliseconds. */
  boundMs: number
  log: FastifyBaseLogger
  /** PostgreSQL: graphile-worker's schema, for its force_unlock_workers (absent: no jobs to unlock). */
  jobsSchema?: string
}

// The database's clock on PostgreSQL (instances on several machines agree on it); the process's on SQLite.
const nowMs = (dialect: DialectName) => (dialect === 'postgres' ? sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint` : sql<number>`${Date.now()}`)

export class InstanceRegistry {
  /** This process's instance id (a new one at every start). */
  readonly id = randomUUID()
  private workerPoolId: string | null = null
  private timer: NodeJS.Timeout | undefined
  private beating: Promise<void> | undefined
  readonly timings: FailoverTimings

  private readonly options: InstanceRegistryOptions

  constructor(options: InstanceRegistryOptions) {
    this.options = options
    this.timings = failoverTimings(options.boundMs)
  }

  /** Writes this instance's row (before the server listens), then beats and sweeps until stop(). */
  async start(workerPoolId: string | null): Promise<void> {
    this.workerPoolId = workerPoolId
    await this.beat()
    await this.sweep().catch((error: unknown) => this.options.log.warn({ err: error }, 'taking over dead instances failed; trying again'))
    this.timer = setInterval(() => {
      if (this.beating) return
      this.beating = this.beat()
        .then(async () => void (await this.sweep()))
        .catch((error: unknown) => this.options.log.warn({ err: error }, 'the instance heartbeat failed; trying again'))
        .finally(() => (this.beating = undefined))
    }, this.timings.heartbeatMs).unref()
  }

  /** Stops beating and deletes this instance's row (a clean stop: its claims and jobs are settled by then). */
  async stop(): Promise<void> {
    clearInterval(this.timer)
    this.timer = undefined
    await this.beating
    await this.options.db.deleteFrom('instances').where('id', '=', this.id).execute().catch(() => {})
  }

  /** Whether the instance with this id beat within the stale time (this one always is). */
  async isAlive(instanceId: string): Promise<boolean> {
    if (instanceId === this.id) return true
    const { db, dialect } = this.options
    const row = await db
      .selectFrom('instances')
      .select('id')
      .where('id', '=', instanceId)
      .where('heartbeat_ms', '>=', sql<number>`${nowMs(dialect)} - ${this.timings.staleMs}`)
      .executeTakeFirst()
    return row !== undefined
  }

  private async beat(): Promise<void> {
    const { db, dialect, log } = this.options
    const updated = await db.updateTable('instances').set({ heartbeat_ms: nowMs(dialect), worker_pool_id: this.workerPoolId }).where('id', '=', this.id).executeTakeFirst()
    if (Number(updated.numUpdatedRows) > 0) return
    const first = this.timer === undefined
    await db
      .insertInto('instances')
      .values({ id: this.id, worker_pool_id: this.workerPoolId, started_at: new Date().toISOString(), heartbeat_ms: nowMs(dialect) })
      .onConflict((oc) => oc.column('id').doUpdateSet({ heartbeat_ms: nowMs(dialect) }))
      .execute()
    if (!first) log.warn({ instance: this.id }, 'this instance missed its heartbeats for longer than the failover bound allows and was taken for dead; jobs it was running may run again elsewhere')
  }

  /** Deletes dead instances' rows and frees the jobs locked by worker pools no live instance owns. */
  async sweep(): Promise<{ dead: number; unlockedPools: string[] }> {
    const { db, dialect, jobsSchema } = this.options
    const stale = sql<number>`${nowMs(dialect)} - ${this.timings.staleMs}`
    const dead = await db.deleteFrom('instances').where('heartbeat_ms', '<', stale).returning('worker_pool_id').execute()
    if (dialect !== 'postgres' || !jobsSchema) return { dead: dead.length, unlockedPools: [] }
    const jobs = sql.id(jobsSchema)
    // Pools holding a lock older than the stale time and owned by no live instance (a live instance's row was
    // just beaten, so a pool is never taken from an instance that is alive).
    const { rows } = await sql<{ pool: string; jobs: number | string }>`
      select locked_by as pool, count(*) as jobs from ${jobs}._private_jobs
      where locked_by is not null and locked_at < now() - make_interval(secs => ${this.timings.staleMs / 1000})
        and locked_by not in (select worker_pool_id from instances where worker_pool_id is not null)
      group by locked_by`.execute(db)
    const pools = rows.map((row) => row.pool)
    if (pools.length > 0) {
      // graphile-worker's own unlock, and its own wake-up: its workers LISTEN on jobs:insert for a count to take.
      const count = rows.reduce((sum, row) => sum + Number(row.jobs), 0)
      await sql`select ${jobs}.force_unlock_workers(${pools}::text[]), pg_notify('jobs:insert', ${JSON.stringify({ count })})`.execute(db)
      this.options.log.warn({ workerPools: pools, jobs: count }, 'jobs locked by dead instances were freed; live instances take them over')
    }
    return { dead: dead.length, unlockedPools: pools }
  }
}
