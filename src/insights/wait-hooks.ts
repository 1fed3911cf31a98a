// Who hears of an ended wait (the metrics, the traces): listeners on the database's context, so the run engine,
// handed only a transaction, tells the app it runs in. Called inside the transaction that ends the wait.
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { dbContext } from '../db/context.js'
import type { InsightWaitTable } from './insights.table.js'
import type { PhaseLike } from './rollup-rows.js'

export interface EndedDecisionWait {
  kind: 'decision'
  phase: PhaseLike
  row: InsightWaitTable
  /** The wait's decisions, oldest first: a quorum's approves, or the one that ended it. */
  decisions: PhaseLike['decisions']
}

export type WaitListener = (wait: EndedDecisionWait) => void

export function onWaitEnded(db: Kysely<Database>, listener: WaitListener): void {
  const context = dbContext(db)
  context.waitListeners = [...(context.waitListeners ?? []), listener]
}

export function waitEnded(db: Kysely<Database>, wait: EndedDecisionWait): void {
  for (const listener of dbContext(db).waitListeners ?? []) {
    try {
      listener(wait)
    } catch {
      // A listener (a metric, a span) never fails the transition that ended the wait.
    }
  }
}
