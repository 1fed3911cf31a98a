// withLockedRun: the one way to act on an existing run. It locks the run for the rest of the caller's
// transaction (store.ts lockRun) and builds the transition context every move of the state machine takes,
// continuing the run's own trace whoever acts.
import type { Kysely } from 'kysely'
import type { Database } from '../../db/database.js'
import type { RunsConfig } from '../../config.js'
import type { Transition } from './machine.js'
import { lockRun } from '../store.js'
import type { Run } from '../schemas.js'

/**
 * Runs `work` on the locked run; undefined when there is no such run (or, given `workspaceId`, when it
 * belongs to another workspace: to the caller, it does not exist).
 */
export async function withLockedRun<T>(
  trx: Kysely<Database>,
  settings: RunsConfig,
  runId: string,
  workspaceId: string | null,
  work: (t: Transition, run: Run) => Promise<T>,
): Promise<T | undefined> {
  const locked = await lockRun(trx, runId)
  if (!locked || (workspaceId !== null && locked.workspaceId !== workspaceId)) return undefined
  return work({ db: trx, workspaceId: locked.workspaceId, settings, traceparent: locked.traceparent, routeCalls: locked.routeCalls }, locked.run)
}
