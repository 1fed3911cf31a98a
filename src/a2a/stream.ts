// A task's stream (SendStreamingMessage, SubscribeToTask): first the task, then in commit order a statusUpdate per
// change of state or status text and an artifactUpdate per new agent message (a streamed one as its deltas, then
// whole with lastChunk). It ends after a terminal state or INPUT_REQUIRED, and at TANDEM_SSE_MAX_LIFETIME_S. Any
// instance serves it: the follower wakes on the run's events from the hub, and the run is read from the database.
import type { FastifyInstance } from 'fastify'
import { TaskState, type Artifact, type StreamResponse, type Task } from '@a2a-js/sdk'
import { findRun } from '../runs/store.js'
import type { Run } from '../runs/schemas.js'
import { artifactOf, artifactsOf, readContext, toTask } from './task-view.js'
import { TaskFollower, type LiveMessageDelta } from './follow.js'
import type { A2aTaskRef } from './tasks-store.js'

const ENDING = new Set([TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_REJECTED, TaskState.TASK_STATE_INPUT_REQUIRED])
// How many streaming messages a stream remembers as the run's (or not): the run's own are few.
const MAX_KNOWN_MESSAGES = 1000

const statusKey = (task: Task) => `${task.status?.state}|${task.status?.message?.parts[0]?.content?.$case === 'text' ? task.status.message.parts[0].content.value : ''}`
const artifactText = (artifact: Artifact) => artifact.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('')

export async function* streamTask(app: FastifyInstance, ref: A2aTaskRef, options: { fresh: boolean; signal?: AbortSignal | undefined }): AsyncGenerator<StreamResponse, void, undefined> {
  const { db } = app.database
  const follower = new TaskFollower(app, ref.streamId, ref.runId)
  const stop = () => follower.close()
  options.signal?.addEventListener('abort', stop)
  const ends = Date.now() + app.config.sseMaxLifetimeMs
  // Streaming messages of this run: message id → its phase (null: another run's message).
  const known = new Map<string, { id: string; phaseName: string; attempts: number } | null>()
  const streamed = new Set<string>()
  try {
    const first = await findRun(db, ref.workspaceId, ref.runId)
    if (!first) return
    let context = await readContext(db, first, ref.principalId)
    const now = toTask(first, context)
    let lastStatus: string
    const sent = new Map<string, string>()
    if (options.fresh) {
      // The task as created: SUBMITTED, nothing yet.
      const created: Task = { ...now, status: { state: TaskState.TASK_STATE_SUBMITTED, timestamp: first.createdAt, message: undefined }, artifacts: [] }
      lastStatus = statusKey(created)
      yield { payload: { $case: 'task', value: created } }
    } else {
      for (const artifact of now.artifacts) sent.set(artifact.artifactId, artifactText(artifact))
      lastStatus = statusKey(now)
      yield { payload: { $case: 'task', value: now } }
      if (now.status && ENDING.has(now.status.state)) return
    }
    for (;;) {
      const signal = await follower.next(ends - Date.now())
      if (signal === null || signal.kind === 'closed') return
      if (signal.kind === 'delta') {
        const update = await deltaUpdate(app, ref, signal.delta, known, streamed)
        if (update) yield update
        continue
      }
      const run = await findRun(db, ref.workspaceId, ref.runId)
      if (!run) return
      context = await readContext(db, run, ref.principalId)
      for (const artifact of artifactsOf(run)) {
        const text = artifactText(artifact)
        if (sent.get(artifact.artifactId) === text) continue
        sent.set(artifact.artifactId, text)
        yield { payload: { $case: 'artifactUpdate', value: { taskId: run.id, contextId: run.streamId, artifact, append: false, lastChunk: true, metadata: undefined } } }
      }
      const task = toTask(run, context, { artifacts: false })
      const key = statusKey(task)
      if (key !== lastStatus) {
        lastStatus = key
        yield { payload: { $case: 'statusUpdate', value: { taskId: run.id, contextId: run.streamId, status: task.status, metadata: undefined } } }
        if (task.status && ENDING.has(task.status.state)) return
      }
    }
  } finally {
    options.signal?.removeEventListener('abort', stop)
    follower.close()
  }
}

/** A live delta of one of the run's streaming messages as an artifact chunk (first `append: false`, then `true`). */
async function deltaUpdate(
  app: FastifyInstance,
  ref: A2aTaskRef,
  delta: LiveMessageDelta,
  known: Map<string, { id: string; phaseName: string; attempts: number } | null>,
  streamed: Set<string>,
): Promise<StreamResponse | null> {
  let phase = known.get(delta.messageId)
  if (phase === undefined) {
    phase = await phaseOfMessage(app, ref, delta.messageId)
    if (known.size < MAX_KNOWN_MESSAGES) known.set(delta.messageId, phase)
  }
  if (!phase) return null
  const append = streamed.has(delta.messageId) && !delta.reset
  streamed.add(delta.messageId)
  const artifact = artifactOf(phase, { messageId: delta.messageId, text: delta.text }, 'interim')
  return { payload: { $case: 'artifactUpdate', value: { taskId: ref.runId, contextId: ref.streamId, artifact, append, lastChunk: false, metadata: undefined } } }
}

async function phaseOfMessage(app: FastifyInstance, ref: A2aTaskRef, messageId: string): Promise<{ id: string; phaseName: string; attempts: number } | null> {
  const { db } = app.database
  const row = await db
    .selectFrom('messages').innerJoin('run_tasks', 'run_tasks.id', 'messages.task_id')
    .select(['run_tasks.phase_run_id', 'run_tasks.attempt'])
    .where('messages.id', '=', messageId).where('run_tasks.run_id', '=', ref.runId)
    .executeTakeFirst()
  if (!row) return null
  const run: Run | undefined = await findRun(db, ref.workspaceId, ref.runId)
  const phase = run?.phases.find((p) => p.id === row.phase_run_id)
  return phase ? { id: phase.id, phaseName: phase.phaseName, attempts: Number(row.attempt) } : null
}
