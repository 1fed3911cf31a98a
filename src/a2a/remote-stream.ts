// Reading one event stream of a remote A2A agent (SendStreamingMessage or SubscribeToTask, the SDK's client parses
// it): the task is put together from its events as the spec says (the first `task`, then each status update, and
// each artifact update replacing or appending to its artifact), the remote task's id is handed on at the first
// event that names it, and the artifacts' text goes to the phase's message as it grows (agent streaming). The
// read stops at a terminal or interrupted state; a stream that breaks, ends early or outlives the dispatch
// time-out leaves the task as far as it came, for the caller to follow with SubscribeToTask.
import { TaskState, type Artifact, type Message, type StreamResponse, type Task, type TaskArtifactUpdateEvent } from '@a2a-js/sdk'
import { partsText } from './remote-wire.js'

export type StreamEnd =
  /** The remote answered with a message instead of a task. */
  | { kind: 'message'; message: Message }
  /** The task as the stream left it: `settled` at a terminal or interrupted state, else cut short (`error` why, if it broke). */
  | { kind: 'task'; task: Task; settled: boolean; error?: unknown }
  /** Nothing naming a task came (`error`: the call or the stream failed; else the stream ended empty). */
  | { kind: 'none'; error?: unknown }

const SETTLED = new Set([
  TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_REJECTED,
  TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED,
])

/** The text the phase's message shows so far: the artifacts' texts joined by a blank line, as the output will be. */
export const artifactsText = (task: Task) => task.artifacts.map((a) => partsText(a.parts)).filter((t) => t !== '').join('\n\n')

function applyArtifact(task: Task, update: TaskArtifactUpdateEvent): void {
  const artifact = update.artifact
  if (!artifact) return
  const at = task.artifacts.findIndex((a) => a.artifactId === artifact.artifactId)
  if (at === -1) task.artifacts.push({ ...artifact, parts: [...artifact.parts] })
  else if (update.append) task.artifacts[at] = { ...(task.artifacts[at] as Artifact), parts: [...(task.artifacts[at] as Artifact).parts, ...artifact.parts] }
  else task.artifacts[at] = { ...artifact, parts: [...artifact.parts] }
}

/**
 * Reads `events` to a settled state or their end. `onTask` is awaited at the first event naming the task (before
 * anything else is read); `onText` gets each growth of the artifacts' text (a text that does not extend the last
 * one, an artifact replaced by another text, is not passed on: the output, at the end, is the message).
 */
export async function readTaskStream(
  events: AsyncGenerator<StreamResponse, void, undefined>,
  handlers: { onTask(task: Task): Promise<void>; onText?: (delta: string) => void },
): Promise<StreamEnd> {
  let task: Task | null = null
  let shown = ''
  try {
    for await (const event of events) {
      const payload = event.payload
      if (!payload) continue
      if (payload.$case === 'message') return { kind: 'message', message: payload.value }
      const named = task === null
      if (payload.$case === 'task') task = { ...payload.value, artifacts: [...payload.value.artifacts] }
      else {
        task ??= { id: payload.value.taskId, contextId: payload.value.contextId, status: undefined, artifacts: [], history: [], metadata: undefined }
        if (payload.$case === 'statusUpdate') task.status = payload.value.status
        else applyArtifact(task, payload.value)
      }
      if (named) await handlers.onTask(task)
      const text = artifactsText(task)
      if (handlers.onText && text.length > shown.length && text.startsWith(shown)) {
        handlers.onText(text.slice(shown.length))
        shown = text
      }
      if (SETTLED.has(task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED)) return { kind: 'task', task, settled: true }
    }
  } catch (error) {
    return task ? { kind: 'task', task, settled: false, error } : { kind: 'none', error }
  } finally {
    // Leaving early (a settled state) ends the generator, which lets go of the connection.
    await events.return(undefined).catch(() => undefined)
  }
  return task ? { kind: 'task', task, settled: false } : { kind: 'none' }
}
