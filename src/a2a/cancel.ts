// A run that ends while a remote A2A agent still works on one of its tasks cancels that remote task: one
// CancelTask, from a job enqueued in the transaction that closed the task (so it runs after the commit, once,
// from any instance). Best effort: a remote that refuses or cannot be reached is logged, the run is not held.
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import type { JobHandler } from '../jobs/registry.js'
import { enqueueJob } from '../jobs/index.js'
import { now } from '../ids.js'
import { openAgentSecret } from '../runs/tasks/secrets.js'
import { deadline } from '../net/deadline.js'
import { cancelRemoteTask } from './client.js'

declare module '../jobs/registry.js' {
  interface JobPayloads {
    /** one CancelTask of a remote A2A agent's task, keyed `a2a-cancel:<taskId>` */
    'a2a.cancel': { taskId: string }
  }
}

export const CANCEL_REMOTE_JOB = 'a2a.cancel'

/** Called where a run's open tasks are closed: a cancel job for each of them that has a remote A2A task. */
export async function queueRemoteCancels(db: Kysely<Database>, taskIds: string[]): Promise<void> {
  if (taskIds.length === 0) return
  const rows = await db.selectFrom('a2a_remote_tasks').select('task_id').where('task_id', 'in', taskIds).where('remote_task_id', 'is not', null).where('canceled_at', 'is', null).execute()
  for (const row of rows) await enqueueJob(db, CANCEL_REMOTE_JOB, { taskId: row.task_id }, { jobKey: `a2a-cancel:${row.task_id}` })
}

export const cancelRemoteJob: JobHandler<{ taskId: string }> = async ({ taskId }, { app }) => {
  const { db } = app.database
  const row = await db
    .selectFrom('a2a_remote_tasks')
    .innerJoin('run_tasks', 'run_tasks.id', 'a2a_remote_tasks.task_id')
    .innerJoin('agents', 'agents.id', 'run_tasks.agent_id')
    .leftJoin('credentials', (join) => join.onRef('credentials.id', '=', 'agents.credential_id').onRef('credentials.workspace_id', '=', 'agents.workspace_id'))
    .select(['a2a_remote_tasks.remote_task_id', 'a2a_remote_tasks.endpoint_url', 'a2a_remote_tasks.canceled_at', 'agents.auth_mode', 'credentials.id as credential_id', 'credentials.key_id', 'credentials.ciphertext'])
    .where('a2a_remote_tasks.task_id', '=', taskId)
    .executeTakeFirst()
  if (!row?.remote_task_id || row.canceled_at) return
  // Recorded first: a crash after this never cancels twice.
  await db.updateTable('a2a_remote_tasks').set({ canceled_at: now() }).where('task_id', '=', taskId).execute()
  const secret = row.credential_id && row.key_id && row.ciphertext && row.auth_mode !== 'none' ? openAgentSecret({ id: row.credential_id, keyId: row.key_id, ciphertext: row.ciphertext }) : null
  const timeoutMs = app.config.runs.dispatchTimeoutMs
  const limit = deadline(timeoutMs, new AbortController().signal)
  try {
    const outcome = await cancelRemoteTask(row.endpoint_url, row.remote_task_id, secret, { fetch: app.egress.fetch, signal: limit.signal, timeoutMs })
    if (outcome !== null) app.log.warn({ taskId, detail: outcome }, 'canceling a remote A2A task failed')
  } finally {
    limit.clear()
  }
}
