// The width bound of message triggers. The loop guard (MAX_TRIGGER_DEPTH) bounds how deep a chain of messages and
// runs goes; this bounds how wide: every run a message trigger starts belongs to the chain of what began it —
// a message with no run behind it (a person's), or a run no message trigger started (by hand, a schedule, a
// hook) — and one chain starts at most MAX_RUNS_PER_CHAIN runs in all, in whatever streams its runs write. A
// message whose runs would pass the bound starts none of them (as a trigger past MAX_RUNS_PER_TRIGGER does), and
// the refusal is logged and counted (./refusals.ts).
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { now } from '../ids.js'

/** Runs message triggers start in one chain, at every depth together. */
export const MAX_RUNS_PER_CHAIN = 50

/** The chain of a message: the one of the run that wrote it, else the message's own. */
export async function chainOf(trx: Kysely<Database>, messageId: string, originRunId: string | null): Promise<string> {
  if (originRunId === null) return `message:${messageId}`
  const row = await trx.selectFrom('trigger_chain_runs').select('root_id').where('run_id', '=', originRunId).executeTakeFirst()
  return row?.root_id ?? `run:${originRunId}`
}

/**
 * Reserves `count` runs in the chain: true when they fit, false (and the refusal counted on the chain) when not.
 * One conditional update, so concurrent messages of a chain never reserve past the bound together.
 */
export async function reserveRuns(trx: Kysely<Database>, workspaceId: string, rootId: string, count: number): Promise<{ granted: boolean; runs: number }> {
  await trx.insertInto('trigger_chains').values({ root_id: rootId, workspace_id: workspaceId, runs: 0, refused: 0, created_at: now() }).onConflict((oc) => oc.column('root_id').doNothing()).execute()
  const granted = await trx.updateTable('trigger_chains').set((eb) => ({ runs: eb('runs', '+', count) })).where('root_id', '=', rootId).where('runs', '<=', MAX_RUNS_PER_CHAIN - count).returning('runs').executeTakeFirst()
  if (granted) return { granted: true, runs: granted.runs }
  const refused = await trx.updateTable('trigger_chains').set((eb) => ({ refused: eb('refused', '+', 1) })).where('root_id', '=', rootId).returning('runs').executeTakeFirstOrThrow()
  return { granted: false, runs: refused.runs }
}

/** Records that a run belongs to the chain (its own messages then count there). */
export async function joinChain(trx: Kysely<Database>, rootId: string, runId: string): Promise<void> {
  await trx.insertInto('trigger_chain_runs').values({ run_id: runId, root_id: rootId, created_at: now() }).execute()
}

/** Forgets chains and their runs older than `before` (with the message passes). */
export async function purgeChains(trx: Kysely<Database>, before: string): Promise<void> {
  await trx.deleteFrom('trigger_chain_runs').where('created_at', '<', before).execute()
  await trx.deleteFrom('trigger_chains').where('created_at', '<', before).execute()
}
