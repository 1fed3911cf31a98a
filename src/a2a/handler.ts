// The A2A methods of one exposed cycle for one caller (docs/a2a.md), behind the SDK's JSON-RPC transport handler:
// a task is a run of the cycle, its context the cycle's stream. Every method reads and writes Tandem's own tables
// in a transaction and follows runs through the event hub, so any instance answers any task and a restart loses
// nothing; no SDK store or event bus holds state. A transaction PostgreSQL aborts as a deadlock's victim is run again
// (src/db/retry.ts).
import type { FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import {
  TaskState,
  type AgentCard, type CancelTaskRequest, type DeleteTaskPushNotificationConfigRequest, type GetExtendedAgentCardRequest,
  type GetTaskPushNotificationConfigRequest, type GetTaskRequest, type ListTaskPushNotificationConfigsRequest,
  type ListTaskPushNotificationConfigsResponse, type ListTasksRequest, type ListTasksResponse, type Message, type SendMessageRequest,
  type StreamResponse, type SubscribeToTaskRequest, type Task, type TaskPushNotificationConfig,
} from '@a2a-js/sdk'
import type { A2ARequestHandler } from '@a2a-js/sdk/server'
import {
  ContentTypeNotSupportedError, RequestMalformedError, TaskNotCancelableError, TaskNotFoundError, UnsupportedOperationError,
} from '@a2a-js/sdk/errors'
import type { Database } from '../db/database.js'
import type { Principal } from '../principals/store.js'
import type { SavedCycle } from '../cycles/schemas.js'
import { insertMessage } from '../chat/store.js'
import { contentOf, createRun, type Transition } from '../runs/machine/machine.js'
import { findRun } from '../runs/store.js'
import { cancel } from '../runs/service.js'
import { answerQuestion } from '../waits/question.js'
import { MAX_INPUT_BYTES } from '../runs/limits.js'
import { AppError } from '../http/problem.js'
import type { Run } from '../runs/schemas.js'
import { MAX_HISTORY, readContext, stateOf, toTask } from './task-view.js'
import { countTasks, findTask, insertTask, listTasks, recordUserMessage, type A2aTaskRef } from './tasks-store.js'
import { noteTaskChange } from './history.js'
import { TaskFollower } from './follow.js'
import { streamTask } from './stream.js'
import { checkPushConfig, deletePushConfig, findPushConfig, listPushConfigs, savePushConfig } from './push.js'
import { runTransaction } from '../db/retry.js'

export const MAX_TEXT_LENGTH = 40000
export const MAX_MESSAGE_TEXT = 16000
export const TERMINAL_STATES = new Set([TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_REJECTED])
/** Where a blocking SendMessage answers: a terminal or an interrupted state. */
const ANSWERING_STATES = new Set([...TERMINAL_STATES, TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED])

export interface CallerScope {
  app: FastifyInstance
  principal: Principal
  cycle: SavedCycle
  traceparent: string | null
  card: AgentCard
  /** Aborted when the caller goes away: its streams stop following. */
  signal?: AbortSignal
}

/** The caller's message: its text (text parts joined by a new line) and its data parts, checked against the bounds. */
function readMessage(message: Message | undefined, streamId: string): { text: string; data: unknown[]; messageId: string } {
  if (!message) throw new RequestMalformedError('params.message is required.')
  if (message.contextId && message.contextId.toLowerCase() !== streamId) throw new RequestMalformedError('contextId: this agent\'s tasks have the context of its stream; leave contextId out or send its own.')
  const texts: string[] = []
  const data: unknown[] = []
  for (const part of message.parts) {
    const content = part.content
    if (content?.$case === 'text') texts.push(content.value)
    else if (content?.$case === 'data') data.push(content.value)
    else if (content?.$case === 'raw' || content?.$case === 'url') throw new ContentTypeNotSupportedError('File parts (raw, url) are not accepted: send text or data parts.')
  }
  if (texts.length === 0 && data.length === 0) throw new RequestMalformedError('The message has no text or data part.')
  const text = texts.join('\n')
  if (text.length > MAX_TEXT_LENGTH) throw new RequestMalformedError(`The message's text is ${text.length} characters; at most ${MAX_TEXT_LENGTH}.`)
  return { text, data, messageId: message.messageId || '' }
}

function checkHistoryLength(historyLength: number | undefined): void {
  if (historyLength !== undefined && (!Number.isInteger(historyLength) || historyLength < 0 || historyLength > MAX_HISTORY)) {
    throw new RequestMalformedError(`historyLength must be between 0 and ${MAX_HISTORY}.`)
  }
}

export class TandemA2aHandler implements A2ARequestHandler {
  private readonly db: Kysely<Database>

  private readonly scope: CallerScope

  constructor(scope: CallerScope) {
    this.scope = scope
    this.db = scope.app.database.db
  }

  private transition(trx: Kysely<Database>): Transition {
    return { db: trx, workspaceId: this.scope.principal.workspaceId, settings: this.scope.app.config.runs, traceparent: this.scope.traceparent }
  }

  async getAgentCard(): Promise<AgentCard> {
    return this.scope.card
  }

  async getAuthenticatedExtendedAgentCard(_params: GetExtendedAgentCardRequest): Promise<AgentCard> {
    throw new UnsupportedOperationError('This agent has no extended agent card.')
  }

  private async requireTask(id: string): Promise<A2aTaskRef> {
    const ref = id ? await findTask(this.db, this.scope.principal.workspaceId, this.scope.cycle.id, id) : undefined
    if (!ref) throw new TaskNotFoundError(`No task ${id} of this agent.`)
    return ref
  }

  private async taskOf(ref: A2aTaskRef, options: { historyLength?: number | undefined; artifacts?: boolean } = {}): Promise<{ task: Task; run: Run }> {
    const run = await findRun(this.db, ref.workspaceId, ref.runId)
    if (!run) throw new TaskNotFoundError(`No task ${ref.runId} of this agent.`)
    return { task: toTask(run, await readContext(this.db, run, ref.principalId), options), run }
  }

  /**
   * Starts a run (no taskId) or answers or comments on the task; returns the task's reference. The push config of
   * `configuration`, if any, is stored in the same transaction: it gets every update after this message.
   */
  private async deliver(params: SendMessageRequest): Promise<A2aTaskRef> {
    const { principal, cycle } = this.scope
    const message = readMessage(params.message, cycle.streamId)
    const push = params.configuration?.taskPushNotificationConfig
    if (push) checkPushConfig(push, 'configuration.taskPushNotificationConfig')
    const taskId = params.message?.taskId
    if (taskId) return this.reply(taskId, message, push)
    const input = {
      message: { id: '', text: message.text.slice(0, MAX_MESSAGE_TEXT), authorId: principal.principalId, authorType: 'principal' },
      a2a: { messageId: message.messageId, data: message.data },
    }
    if (Buffer.byteLength(JSON.stringify(input)) > MAX_INPUT_BYTES) throw new RequestMalformedError(`The message's input is over ${MAX_INPUT_BYTES} bytes as JSON.`)
    return runTransaction(this.db, async (trx) => {
      const posted = await insertMessage(trx, {
        workspaceId: principal.workspaceId, streamId: cycle.streamId, authorId: principal.principalId, content: contentOf(message.text || JSON.stringify(message.data)),
        traceparent: this.scope.traceparent, fireTriggers: false,
      })
      input.message.id = posted.id
      const run = await createRun(this.transition(trx), { cycle, input, createdBy: principal.principalId, trigger: { kind: 'a2a', id: posted.id } })
      const ref = { runId: run.id, workspaceId: principal.workspaceId, cycleId: cycle.id, streamId: cycle.streamId, principalId: principal.principalId }
      await insertTask(trx, { ...ref, messageId: message.messageId, text: message.text })
      await noteTaskChange(trx, run)
      if (push) await this.savePush(trx, run.id, push)
      return { ...ref, createdAt: run.createdAt }
    })
  }

  /** A message on an existing task: the answer to its question when the sender may answer it, else a comment. */
  private async reply(taskId: string, message: { text: string; messageId: string }, push: TaskPushNotificationConfig | undefined): Promise<A2aTaskRef> {
    const ref = await this.requireTask(taskId)
    const { principal } = this.scope
    await runTransaction(this.db, async (trx) => {
      const run = await findRun(trx, ref.workspaceId, ref.runId)
      if (!run) throw new TaskNotFoundError(`No task ${taskId} of this agent.`)
      const context = await readContext(trx, run, ref.principalId)
      const { state, meta } = stateOf(run, { ...context, starter: principal })
      if (TERMINAL_STATES.has(state)) throw new UnsupportedOperationError(`The task has ended (${TaskState[state]}): it takes no more messages.`)
      await recordUserMessage(trx, run.id, message.messageId, message.text)
      if (push) await this.savePush(trx, run.id, push)
      if (state === TaskState.TASK_STATE_INPUT_REQUIRED && meta.phaseRunId) {
        try {
          await answerQuestion(this.scope.app.config.runs, trx, principal, { runId: run.id, phaseRunId: meta.phaseRunId, text: message.text })
          return
        } catch (error) {
          if (!(error instanceof AppError)) throw error
          // The question closed meanwhile: the text becomes a comment, as below.
        }
      }
      await insertMessage(trx, {
        workspaceId: principal.workspaceId, streamId: run.streamId, authorId: principal.principalId, content: contentOf(message.text),
        traceparent: this.scope.traceparent, fireTriggers: false,
      })
    })
    return ref
  }

  async sendMessage(params: SendMessageRequest): Promise<Message | Task> {
    const historyLength = params.configuration?.historyLength
    checkHistoryLength(historyLength)
    const ref = await this.deliver(params)
    if (!params.configuration?.returnImmediately) await this.waitForAnswer(ref)
    return (await this.taskOf(ref, { historyLength })).task
  }

  /** Until the task is interrupted or ended, or TANDEM_A2A_WAIT_S passed. */
  private async waitForAnswer(ref: A2aTaskRef): Promise<void> {
    const deadline = Date.now() + this.scope.app.config.a2aWaitMs
    const follower = new TaskFollower(this.scope.app, ref.streamId, ref.runId)
    try {
      for (;;) {
        const signal = await follower.next(deadline - Date.now())
        if (signal === null || signal.kind === 'closed') return
        if (signal.kind !== 'changed') continue
        const run = await findRun(this.db, ref.workspaceId, ref.runId)
        if (!run) return
        const { state } = stateOf(run, await readContext(this.db, run, ref.principalId))
        if (ANSWERING_STATES.has(state)) return
      }
    } finally {
      follower.close()
    }
  }

  async *sendMessageStream(params: SendMessageRequest): AsyncGenerator<StreamResponse, void, undefined> {
    const replying = Boolean(params.message?.taskId)
    const ref = await this.deliver(params)
    yield* streamTask(this.scope.app, ref, { fresh: !replying, signal: this.scope.signal })
  }

  async *resubscribe(params: SubscribeToTaskRequest): AsyncGenerator<StreamResponse, void, undefined> {
    const ref = await this.requireTask(params.id)
    const { task } = await this.taskOf(ref)
    if (task.status && TERMINAL_STATES.has(task.status.state)) throw new UnsupportedOperationError(`The task has ended (${TaskState[task.status.state]}): there is nothing to subscribe to.`)
    yield* streamTask(this.scope.app, ref, { fresh: false, signal: this.scope.signal })
  }

  async getTask(params: GetTaskRequest): Promise<Task> {
    checkHistoryLength(params.historyLength)
    return (await this.taskOf(await this.requireTask(params.id), { historyLength: params.historyLength })).task
  }

  async listTasks(params: ListTasksRequest): Promise<ListTasksResponse> {
    const pageSize = params.pageSize ?? 50
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 100) throw new RequestMalformedError('pageSize must be between 1 and 100.')
    checkHistoryLength(params.historyLength)
    if (params.contextId && params.contextId.toLowerCase() !== this.scope.cycle.streamId) return { tasks: [], nextPageToken: '', pageSize, totalSize: 0 }
    let after: { updatedAt: string; runId: string } | null = null
    if (params.pageToken) {
      const [updatedAt, runId] = Buffer.from(params.pageToken, 'base64url').toString().split('|')
      if (!updatedAt || !runId || Number.isNaN(Date.parse(updatedAt))) throw new RequestMalformedError('pageToken is not one this agent gave.')
      after = { updatedAt, runId }
    }
    let updatedAfter: string | null = null
    if (params.statusTimestampAfter) {
      const at = Date.parse(params.statusTimestampAfter)
      if (Number.isNaN(at)) throw new RequestMalformedError('statusTimestampAfter is not an ISO 8601 timestamp.')
      // Stored times have milliseconds: the instance's own form compares as text; "at or after" it.
      updatedAfter = new Date(at - 1).toISOString()
    }
    const filter = {
      workspaceId: this.scope.principal.workspaceId, cycleId: this.scope.cycle.id, principalId: this.scope.principal.principalId,
      states: params.status ? [TaskState[params.status]] : null, updatedAfter,
    }
    const refs = await listTasks(this.db, { ...filter, after, limit: pageSize + 1 })
    const page = refs.slice(0, pageSize)
    const tasks: Task[] = []
    for (const ref of page) {
      tasks.push((await this.taskOf(ref, { historyLength: params.historyLength ?? 0, artifacts: params.includeArtifacts === true })).task)
    }
    const last = page.at(-1)
    const nextPageToken = refs.length > pageSize && last ? Buffer.from(`${last.updatedAt}|${last.runId}`).toString('base64url') : ''
    return { tasks, nextPageToken, pageSize, totalSize: await countTasks(this.db, filter) }
  }

  async cancelTask(params: CancelTaskRequest): Promise<Task> {
    const ref = await this.requireTask(params.id)
    const { principal } = this.scope
    try {
      await runTransaction(this.db, (trx) =>
        cancel({ settings: this.scope.app.config.runs }, trx, { ...principal, traceparent: this.scope.traceparent }, ref.runId),
      )
    } catch (error) {
      if (error instanceof AppError && (error.kind === 'forbidden' || error.kind === 'run-finished')) throw new TaskNotCancelableError(error.message)
      throw error
    }
    return (await this.taskOf(ref)).task
  }

  private savePush(trx: Kysely<Database>, runId: string, config: TaskPushNotificationConfig): Promise<TaskPushNotificationConfig> {
    return savePushConfig({ vault: this.scope.app.vault }, trx, { runId, principalId: this.scope.principal.principalId, config })
  }

  async createTaskPushNotificationConfig(params: TaskPushNotificationConfig): Promise<TaskPushNotificationConfig> {
    const ref = await this.requireTask(params.taskId)
    checkPushConfig(params)
    return runTransaction(this.db, (trx) => this.savePush(trx, ref.runId, params))
  }

  async getTaskPushNotificationConfig(params: GetTaskPushNotificationConfigRequest): Promise<TaskPushNotificationConfig> {
    const ref = await this.requireTask(params.taskId)
    return findPushConfig(this.db, ref.runId, this.scope.principal.principalId, params.id)
  }

  async listTaskPushNotificationConfigs(params: ListTaskPushNotificationConfigsRequest): Promise<ListTaskPushNotificationConfigsResponse> {
    const ref = await this.requireTask(params.taskId)
    // A task has at most MAX_PUSH_CONFIGS: one page holds them all.
    return { configs: await listPushConfigs(this.db, ref.runId, this.scope.principal.principalId), nextPageToken: '' }
  }

  async deleteTaskPushNotificationConfig(params: DeleteTaskPushNotificationConfigRequest): Promise<void> {
    const ref = await this.requireTask(params.taskId)
    await runTransaction(this.db, (trx) => deletePushConfig(trx, ref.runId, this.scope.principal.principalId, params.id))
  }
}
