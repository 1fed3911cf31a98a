// The ledger of tasks sent to remote A2A agents (0091): the one guard of at-most-once sending. `claim` commits
// its row before the message leaves; `remoteTask` records the remote task's id once it is known; `release` undoes
// a claim only when the message is known not to have been taken (no connection, or the remote refused it).
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { now } from '../ids.js'

export type LedgerEntry = { remoteTaskId: string | null; remoteContextId: string | null; endpointUrl: string }

export interface RemoteTaskLedger {
  /** The entry of an earlier send of this task, or null after recording this one (committed). */
  claim(taskId: string, endpointUrl: string): Promise<LedgerEntry | null>
  remoteTask(taskId: string, remoteTaskId: string, remoteContextId: string): Promise<void>
  release(taskId: string): Promise<void>
  find(taskId: string): Promise<LedgerEntry | null>
  /** The remote task of the phase's latest earlier attempt (a revision continues its context), or null. */
  previous(taskId: string): Promise<{ remoteTaskId: string; remoteContextId: string } | null>
}

export function remoteTaskLedger(db: Kysely<Database>): RemoteTaskLedger {
  const find = async (taskId: string): Promise<LedgerEntry | null> => {
    const row = await db.selectFrom('a2a_remote_tasks').select(['remote_task_id', 'remote_context_id', 'endpoint_url']).where('task_id', '=', taskId).executeTakeFirst()
    return row ? { remoteTaskId: row.remote_task_id, remoteContextId: row.remote_context_id, endpointUrl: row.endpoint_url } : null
  }
  return {
    find,
    async previous(taskId) {
      const task = await db.selectFrom('run_tasks').select(['run_id', 'phase_run_id', 'attempt']).where('id', '=', taskId).executeTakeFirst()
      if (!task) return null
      const row = await db
        .selectFrom('run_tasks').innerJoin('a2a_remote_tasks', 'a2a_remote_tasks.task_id', 'run_tasks.id')
        .select(['a2a_remote_tasks.remote_task_id', 'a2a_remote_tasks.remote_context_id'])
        // Through the run's tasks (run_tasks_run): no index leads with the phase run.
        .where('run_tasks.run_id', '=', task.run_id).where('run_tasks.phase_run_id', '=', task.phase_run_id).where('run_tasks.attempt', '<', task.attempt)
        .where('a2a_remote_tasks.remote_task_id', 'is not', null)
        .orderBy('run_tasks.attempt', 'desc').limit(1).executeTakeFirst()
      return row?.remote_task_id ? { remoteTaskId: row.remote_task_id, remoteContextId: row.remote_context_id ?? '' } : null
    },
    async claim(taskId, endpointUrl) {
      // Its own statement, outside any transaction: committed before the send.
      const inserted = await db.insertInto('a2a_remote_tasks').values({ task_id: taskId, endpoint_url: endpointUrl, remote_task_id: null, remote_context_id: null, sent_at: now(), canceled_at: null, relayed_call_id: null })
        .onConflict((oc) => oc.column('task_id').doNothing()).executeTakeFirst()
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) return null
      return (await find(taskId)) ?? { remoteTaskId: null, remoteContextId: null, endpointUrl }
    },
    async remoteTask(taskId, remoteTaskId, remoteContextId) {
      await db.updateTable('a2a_remote_tasks').set({ remote_task_id: remoteTaskId, remote_context_id: remoteContextId }).where('task_id', '=', taskId).execute()
    },
    async release(taskId) {
      await db.deleteFrom('a2a_remote_tasks').where('task_id', '=', taskId).where('remote_task_id', 'is', null).execute()
    },
  }
}
