// POST /api/tasks/{taskId}/tools/{name} and GET /api/tasks/{taskId}/tool-calls/{callId}: a webhook or token-only
// agent calls its tools (docs/tools-and-approvals.md). Registered inside the task routes' scope: the caller shows
// the task's token or an agent key of its agent, as for the result.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import Type from 'typebox'
import { notFound } from '../../http/problem.js'
import { Nullable, ProblemResponses, StringEnum, Uuid } from '../../http/schemas.js'
import type { TaskRow } from '../store.js'
import { toToolCall } from './store.js'
import { ToolCallSchema } from './schemas.js'
import { callTaskTool } from './task.js'
import { MAX_TOOL_NAME_IN_PATH, MAX_WAIT_SECONDS } from '../limits.js'

const CallParams = Type.Object({ taskId: Uuid, name: Type.String({ minLength: 1, maxLength: MAX_TOOL_NAME_IN_PATH }) }, { additionalProperties: false })
const CallBody = Type.Object({ input: Type.Unknown({ description: 'the tool\'s input: a JSON object of at most 64 KiB' }) }, { additionalProperties: false, required: ['input'], title: 'TaskToolCall' })
const Called = Type.Object(
  { callId: Uuid, status: StringEnum(['succeeded', 'failed']), output: Nullable(Type.String()), error: Nullable(Type.String()) },
  { title: 'TaskToolCallDone' },
)
const Waiting = Type.Object(
  { callId: Uuid, status: StringEnum(['awaiting_approval', 'running'], { description: '`awaiting_approval`, or `running` for a question an operator has yet to answer' }) },
  { title: 'TaskToolCallWaiting' },
)
const ReadParams = Type.Object({ taskId: Uuid, callId: Uuid }, { additionalProperties: false })
const ReadQuery = Type.Object({ waitSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_WAIT_SECONDS, default: 0 })) }, { additionalProperties: false })
const POLL_MS = 250

export function taskToolRoutes(authenticate: (request: FastifyRequest) => Promise<void>): FastifyPluginAsyncTypebox {
  return async (app) => {
    const { db } = app.database

    app.post(
      '/tasks/:taskId/tools/:name',
      {
        onRequest: async (request) => authenticate(request),
        schema: {
          operationId: 'callTaskTool', tags: ['tasks'], summary: 'Call one of the task\'s tools (custom_webhook and custom_token_only agents)',
          description:
            '`name` is one of the payload\'s `tools`. 200: the call was made (`succeeded` or `failed`, with the whole output, at most 64 KiB). ' +
            '202: it waits for an operator (an approval, or the answer to `tandem.ask_operator`); read it with GET …/tool-calls/{callId}?waitSeconds. ' +
            '404 for a tool the agent does not have; 409 `task-closed` once the task is closed.',
          params: CallParams, body: CallBody, response: { 200: Called, 202: Waiting, ...ProblemResponses },
        },
      },
      async (request, reply) => {
        const { waiting, call } = await callTaskTool(app, request.task as TaskRow, request.params.name, request.body.input)
        if (waiting) return reply.code(202).send({ callId: call.id, status: call.status === 'awaiting_approval' ? ('awaiting_approval' as const) : ('running' as const) })
        return { callId: call.id, status: call.status === 'succeeded' ? ('succeeded' as const) : ('failed' as const), output: call.output, error: call.error }
      },
    )

    app.get(
      '/tasks/:taskId/tool-calls/:callId',
      {
        onRequest: async (request) => authenticate(request),
        schema: {
          operationId: 'getTaskToolCall', tags: ['tasks'], summary: 'Read a call of the task\'s tools, waiting up to waitSeconds for it to settle',
          description: `Answers as soon as the call is \`succeeded\`, \`failed\` or \`denied\`, or after \`waitSeconds\` (0–${MAX_WAIT_SECONDS}) with the call as it is. The output is whole.`,
          params: ReadParams, querystring: ReadQuery, response: { 200: ToolCallSchema, ...ProblemResponses },
        },
      },
      async (request) => {
        const task = request.task as TaskRow
        const deadline = Date.now() + (request.query.waitSeconds ?? 0) * 1000
        const read = () => db.selectFrom('tool_calls').selectAll().where('id', '=', request.params.callId.toLowerCase()).where('task_id', '=', task.id).executeTakeFirst()
        let row = await read()
        if (!row) throw notFound('Tool call')
        const release = deadline > Date.now() ? app.heldRequests.take(`task:${task.id}`, request.ip) : undefined
        try {
          while (row && (row.status === 'running' || row.status === 'awaiting_approval') && Date.now() < deadline && !request.raw.destroyed) {
            await new Promise((resolve) => setTimeout(resolve, Math.min(POLL_MS, Math.max(deadline - Date.now(), 0))))
            row = await read()
          }
        } finally {
          release?.()
        }
        if (!row) throw notFound('Tool call')
        return toToolCall(row, true)
      },
    )
  }
}
