// A task's history and last change, kept as the run changes (docs/a2a.md "History"): the run engine calls
// noteTaskChange in the transaction of every change of a run started over A2A. The task's row gets the time of the
// change; when the task's status (its state and status text) differs from the one last recorded, the status
// message joins the history (a2a_task_messages, role `agent`), at most MAX_HISTORY of them per task (the oldest go).
// Each new or changed artifact and each new status is also an update for the task's push configs: their
// deliveries are scheduled here, in the same transaction (push-delivery.ts).
import { createHash } from 'node:crypto'
import { TaskState, type Artifact, type StreamResponse, type TaskStatus } from '@a2a-js/sdk'
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { newId, now } from '../ids.js'
import type { Run } from '../runs/schemas.js'
import { MAX_HISTORY, artifactsOf, readContext, stateOf, statusMessage } from './task-view.js'
import { schedulePushes } from './push-delivery.js'

export const statusKeyOf = (state: TaskState, text: string | null) => `${TaskState[state]}|${text ?? ''}`

const artifactText = (artifact: Artifact) => artifact.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('')

/** The run's artifacts by id, each with a digest of its text: what tells a new or changed one. */
function artifactKeysOf(artifacts: Artifact[]): Record<string, string> {
  const keys: Record<string, string> = {}
  for (const artifact of artifacts) keys[artifact.artifactId] = createHash('sha256').update(artifactText(artifact)).digest('base64url').slice(0, 22)
  return keys
}

/** Records the run's change on its A2A task (nothing for other runs, or before the task's row exists). */
export async function noteTaskChange(db: Kysely<Database>, run: Run): Promise<void> {
  if (run.trigger.kind !== 'a2a') return
  const task = await db.selectFrom('a2a_tasks').select(['principal_id', 'status_key', 'artifact_keys']).where('run_id', '=', run.id).executeTakeFirst()
  if (!task) return
  const at = now()
  const changes: { updated_at: string; status_key?: string; artifact_keys?: string } = { updated_at: at }
  const updates: StreamResponse[] = []
  const artifacts = artifactsOf(run)
  const keys = artifactKeysOf(artifacts)
  const keysText = JSON.stringify(keys)
  if (keysText !== task.artifact_keys) {
    // Null: a task from before artifacts were recorded, or the task's first change; what it has now is not news.
    const seen = task.artifact_keys === null ? keys : (JSON.parse(task.artifact_keys) as Record<string, string>)
    for (const artifact of artifacts) {
      if (seen[artifact.artifactId] === keys[artifact.artifactId]) continue
      updates.push({ payload: { $case: 'artifactUpdate', value: { taskId: run.id, contextId: run.streamId, artifact, append: false, lastChunk: true, metadata: undefined } } })
    }
    changes.artifact_keys = keysText
  }
  const { state, text, meta } = stateOf(run, await readContext(db, run, task.principal_id, { messages: false }))
  const key = statusKeyOf(state, text)
  if (key !== task.status_key) {
    changes.status_key = key
    // The status as GetTask will show it: with text, the history's new status message (its id and time).
    let status: TaskStatus = { state, timestamp: run.finishedAt ?? at, message: undefined }
    if (text !== null) {
      const id = newId()
      await db.insertInto('a2a_task_messages').values({
        id, run_id: run.id, message_id: id, role: 'agent', text, created_at: at, state: TaskState[state], meta: JSON.stringify(meta),
      }).execute()
      const older = await db.selectFrom('a2a_task_messages').select('id')
        .where('run_id', '=', run.id).where('role', '=', 'agent')
        .orderBy('id', 'desc').limit(MAX_HISTORY).offset(MAX_HISTORY).execute()
      if (older.length > 0) await db.deleteFrom('a2a_task_messages').where('id', 'in', older.map((r) => r.id)).execute()
      status = { state, timestamp: at, message: statusMessage(run, text, meta, id) }
    }
    updates.push({ payload: { $case: 'statusUpdate', value: { taskId: run.id, contextId: run.streamId, status, metadata: undefined } } })
  }
  await db.updateTable('a2a_tasks').set(changes).where('run_id', '=', run.id).execute()
  await schedulePushes(db, run.id, updates)
}
