// POST /api/tasks/{taskId}/result: an agent answers a task. Registered outside the API-key authentication of
// the other /api routes (behind the same rate limits, see app.ts): the caller shows the task's own token
// (result.token) or an agent key of its agent.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { AppError } from '../../http/problem.js'
import { ProblemResponses } from '../../http/schemas.js'
import { findPrincipalByKey } from '../../principals/store.js'
import { answerProblems } from './answer.js'
import { settleTask } from './delivery.js'
import { hashToken, runProblem } from '../machine/machine.js'
import { findTask, type TaskRow } from '../store.js'
import { TaskAccepted, TaskDeltaAccepted, TaskDeltaBody, TaskIdParams, TaskResultBody } from '../schemas.js'
import { findAgent } from '../../agents/store.js'
import { appendTaskDelta } from '../../chat/streaming.js'
import { MAX_TEXT_LENGTH } from '../../chat/schemas.js'
import { publishDelta } from '../../events/deltas.js'
import { countTokens } from '../../metrics/tokens.js'
import { taskToolRoutes } from '../tool-calls/task-routes.js'

declare module 'fastify' {
  interface FastifyRequest {
    task?: TaskRow
  }
}

const unauthorized = (detail: string) => new AppError('unauthorized', detail, undefined, { 'www-authenticate': 'Bearer realm="tandem"' })
const refused = () => unauthorized('The token is neither this task\'s result.token nor an agent key of its agent.')

export const taskResultRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.database
  app.decorateRequest('task', undefined)

  // Who may answer: the holder of the task's current token, or an agent key of the task's agent. Every other
  // credential — a made-up one, a revoked key, a valid key of another agent or workspace, any key for a task that
  // does not exist — gets the same 401, so that answers tell neither a valid key nor a task id from a guess.
  async function authenticate(request: FastifyRequest): Promise<void> {
    const match = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? '')
    if (!match) throw unauthorized('Send the task\'s result.token (or an agent key of its agent) as Authorization: Bearer <token>.')
    const credential = match[1] as string
    const { taskId } = request.params as { taskId: string }
    const task = /^[0-9a-fA-F-]{36}$/.test(taskId) ? await findTask(db, taskId.toLowerCase()) : undefined
    if (credential.startsWith('tdt_')) {
      const hash = hashToken(credential)
      if (task?.token_hash === hash) {
        request.task = task
        return
      }
      // A token a re-claim replaced: the right task, but it no longer takes this token's answer.
      if (task && (JSON.parse(task.past_token_hashes) as string[]).includes(hash)) throw new AppError('task-closed', 'This task was claimed again after your lease ran out; your token no longer answers it.')
      throw refused()
    }
    const principal = await findPrincipalByKey(db, credential)
    if (!principal || !task || task.workspace_id !== principal.workspaceId || principal.agentId !== task.agent_id) throw refused()
    request.task = task
  }

  app.post(
    '/tasks/:taskId/result',
    {
      onRequest: async (request) => authenticate(request),
      schema: {
        operationId: 'submitTaskResult',
        tags: ['tasks'],
        summary: 'Answer a task: its output, or an error',
        description:
          'Body: `{ "output": { "text": "…" } }`, `{ "output": { "content": <rich text> } }` or `{ "error": { "detail": "…" } }`. ' +
          'Authorization: Bearer <result.token> or an agent key of the task\'s agent. 409 `task-closed` when the task is already answered, canceled or superseded; ' +
          '409 `tool-call-awaiting-approval` while one of the task\'s tool calls waits for an operator (read the call until it is settled, then answer).',
        params: TaskIdParams,
        body: TaskResultBody,
        response: { 200: TaskAccepted, ...ProblemResponses },
      },
    },
    async (request) => {
      const task = request.task as TaskRow
      const errors = answerProblems(request.body)
      if (errors.length > 0) throw new AppError('validation-error', `The body has ${errors.length} problem${errors.length === 1 ? '' : 's'}; see errors.`, errors)
      if (task.state !== 'open') throw new AppError('task-closed', `The task is ${task.state}; it no longer takes an answer.`)
      // An answer while one of the task's tool calls waits for an operator would be lost with the call: refused.
      const waiting = await db.selectFrom('tool_calls').select(['id', 'name']).where('task_id', '=', task.id).where('status', '=', 'awaiting_approval').executeTakeFirst()
      if (waiting) {
        throw new AppError('tool-call-awaiting-approval', `The tool call ${waiting.id} (${waiting.name}) is waiting for an operator's approval; read it with GET /api/tasks/${task.id}/tool-calls/${waiting.id}?waitSeconds=30 until it is settled, then post the result.`)
      }
      const { output, error, usage } = request.body
      const settlement = output
        ? { output: output.content ? { content: output.content } : { text: output.text as string }, usage: usage ?? null }
        : { problem: runProblem('agent-failed', `The agent reported: ${error!.detail}`) }
      const outcome = await settleTask(db, app.config.runs, task.id, settlement, task)
      if (outcome === 'closed') throw new AppError('task-closed', 'The task was closed (answered, canceled or superseded) before this answer; it no longer takes one.')
      if (output && usage) {
        const agent = await findAgent(db, task.workspace_id, task.agent_id)
        if (agent) countTokens(app, agent.providerType, usage)
      }
      return { accepted: true as const }
    },
  )

  app.post(
    '/tasks/:taskId/deltas',
    {
      onRequest: async (request) => authenticate(request),
      schema: {
        operationId: 'submitTaskDelta',
        tags: ['tasks'],
        summary: 'Stream a piece of the answer before the result',
        description:
          'Body: `{ "text": "<delta>" }`, for an agent with `capabilities.streaming: true` (else 409 `streaming-off`). The first delta creates the ' +
          'agent\'s message (`status: "streaming"`); each one goes live to the stream\'s SSE clients as `message.delta`. The answer is still ' +
          'POSTed to `/result` (its output replaces the streamed text). Authorization as for `/result`; 409 `task-closed` once the task is closed. ' +
          'A streamed message holds at most 40,000 characters: the delta that would pass that is a 409 `message-too-long`, the message becomes `failed` and later deltas are refused the same way.',
        params: TaskIdParams,
        body: TaskDeltaBody,
        response: { 200: TaskDeltaAccepted, ...ProblemResponses },
      },
    },
    async (request) => {
      const task = request.task as TaskRow
      if (task.state !== 'open') throw new AppError('task-closed', `The task is ${task.state}; it no longer takes deltas.`)
      const agent = await findAgent(db, task.workspace_id, task.agent_id)
      if (!agent?.capabilities.streaming) throw new AppError('streaming-off', 'The task\'s agent does not stream (capabilities.streaming is not true): POST the whole answer to /result.')
      const run = await db.selectFrom('runs').select(['stream_id']).where('id', '=', task.run_id).executeTakeFirstOrThrow()
      const appended = await appendTaskDelta(db, {
        workspaceId: task.workspace_id, streamId: run.stream_id, authorId: task.agent_id, taskId: task.id, delta: request.body.text,
        traceparent: task.traceparent, postgres: app.database.dialect === 'postgres',
      })
      if (!appended) throw new AppError('task-closed', 'The task was closed before this delta; it no longer takes one.')
      if (appended.tooLong) {
        throw new AppError('message-too-long', `The streamed message has ${appended.length} characters and this delta ${request.body.text.length}; a message holds at most ${MAX_TEXT_LENGTH}. The stream has failed (the message is "failed" with the text it had) and takes no more deltas; POST the answer to /result.`)
      }
      await publishDelta(db, { streamId: run.stream_id, messageId: appended.messageId, offset: appended.offset, text: request.body.text, ...(appended.reset ? { reset: true as const } : {}) })
      return { accepted: true as const, messageId: appended.messageId, offset: appended.offset }
    },
  )

  // The task's tools (docs/tools-and-approvals.md), behind the same authentication.
  await app.register(taskToolRoutes(authenticate))
}
