// Retention: events older than TANDEM_EVENT_RETENTION_DAYS are removed in batches, hourly and at start-up,
// by every instance (deleting is idempotent, so instances racing only repeat work).
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { purgeEvents } from './store.js'

const BATCH = 1000
const EVERY_MS = 60 * 60 * 1000

/** Removes every event created before `cutoff`, a batch at a time; returns how many. */
export async function purgeExpiredEvents(db: Kysely<Database>, cutoff: string): Promise<number> {
  let total = 0
  for (;;) {
    const purged = await purgeEvents(db, cutoff, BATCH)
    total += purged
    if (purged === 0) return total
  }
}

export function startRetention(db: Kysely<Database>, days: number, log: FastifyBaseLogger): { stop(): Promise<void> } {
  let running: Promise<unknown> = Promise.resolve()
  let stopped = false
  const run = () => {
    if (stopped) return
    const cutoff = new Date(Date.now() - days * 24 * 60 * 60 * 1000).toISOString()
    running = purgeExpiredEvents(db, cutoff).then(
      (purged) => purged > 0 && log.info({ purged, cutoff }, 'purged expired events'),
      (error: unknown) => log.error({ err: error }, 'purging expired events failed'),
    )
  }
  const first = setTimeout(run, 1000)
  const timer = setInterval(run, EVERY_MS)
  first.unref()
  timer.unref()
  return {
    async stop() {
      stopped = true
      clearTimeout(first)
      clearInterval(timer)
      await running
    },
  }
}
