// A verified call of an inbound hook, in one transaction: the receipt of its webhook-id claimed, the runs
// started, the answer recorded — so a replay within 24 hours (or a racing one) gets the first answer and starts
// nothing. Run again after a deadlock or a serialization failure, as a request's transaction is (db/retry.ts).
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { fireStreamTrigger, type FireDeps } from '../triggers/fire.js'
import { claimReceipt, recordAnswer, type HookRow } from './store.js'
import { runTransaction } from '../db/retry.js'

export async function receiveHookCall(
  deps: FireDeps,
  db: Kysely<Database>,
  hook: HookRow,
  webhookId: string,
  input: Record<string, unknown>,
): Promise<{ replayed: boolean; answer: string }> {
  return runTransaction(db, async (trx) => {
    const receipt = await claimReceipt(trx, hook.id, webhookId)
    if (receipt !== true) return { replayed: true, answer: receipt.answer }
    const runs = await fireStreamTrigger(deps, trx, {
      workspaceId: hook.workspace_id, streamId: hook.stream_id, triggerName: hook.trigger_name, input,
      createdBy: hook.created_by, trigger: { kind: 'hook', id: hook.id },
    })
    const answer = JSON.stringify({ runs: runs.map((run) => ({ id: run.id })) })
    await recordAnswer(trx, hook.id, webhookId, answer)
    return { replayed: false, answer }
  })
}
