// /api/runs/{runId}/tool-calls: the calls of a run's model tool loops, the approval decision on one, and the answer
// to an agent's question (docs/tools-and-approvals.md). Handlers validate and call one service function
// (src/waits/tool-approval.ts, question.ts) inside reply.withTransaction.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { Page, PageQuery, ProblemResponses, StringEnum, Uuid } from '../../http/schemas.js'
import { decodeCursor, toPage } from '../../http/pagination.js'
import { notFound } from '../../http/problem.js'
import { DecisionParams, RunIdParams } from '../schemas.js'
import { MAX_ANSWER_LENGTH, MAX_NOTE_LENGTH } from '../limits.js'
import { listToolCalls } from './store.js'
import { decideToolCall } from '../../waits/tool-approval.js'
import { answerQuestion } from '../../waits/question.js'
import { ToolCallSchema } from './schemas.js'
import { viaOf } from '../../http/via.js'

const ToolCallParams = Type.Object({ runId: Uuid, callId: Uuid }, { additionalProperties: false })
const ToolDecisionBody = Type.Object(
  { decision: StringEnum(['approve', 'deny']), note: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_NOTE_LENGTH })) },
  { additionalProperties: false, title: 'ToolCallDecision' },
)
const AnswerBody = Type.Object({ text: Type.String({ minLength: 1, maxLength: MAX_ANSWER_LENGTH }) }, { additionalProperties: false, title: 'QuestionAnswer' })

export const toolCallRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.database
  const settings = app.config.runs

  app.get(
    '/runs/:runId/tool-calls',
    {
      schema: {
        operationId: 'listToolCalls', tags: ['runs'], summary: 'List the tool calls of a run, oldest first',
        params: RunIdParams, querystring: PageQuery, response: { 200: Page(ToolCallSchema), ...ProblemResponses },
      },
    },
    async (request) => {
      const limit = request.query.limit ?? 50
      const calls = await listToolCalls(db, request.principal.workspaceId, request.params.runId, limit + 1, decodeCursor(request.query.cursor))
      if (!calls) throw notFound('Run')
      return toPage(calls, limit)
    },
  )

  app.post(
    '/runs/:runId/tool-calls/:callId/decision',
    {
      schema: {
        operationId: 'decideToolCall', tags: ['runs'], summary: 'Approve or deny a tool call awaiting approval',
        description:
          'Same pool rule as deciding a phase. `approve` makes the call (once) and the agent\'s loop goes on; `deny` gives the model ' +
          '`denied by @<handle>: <note>`. 409 `not-awaiting-approval` when the call does not wait.',
        params: ToolCallParams, body: ToolDecisionBody, response: { 200: ToolCallSchema, ...ProblemResponses },
      },
    },
    async (request, reply) =>
      reply.withTransaction((trx) =>
        decideToolCall(settings, trx, { ...request.principal, via: viaOf(request) }, { runId: request.params.runId, callId: request.params.callId, decision: request.body.decision, note: request.body.note ?? null }),
      ),
  )

  app.post(
    '/runs/:runId/phases/:phaseRunId/answer',
    {
      schema: {
        operationId: 'answerQuestion', tags: ['runs'], summary: 'Answer the question an agent asked with tandem.ask_operator',
        description: 'Same pool rule as deciding a phase; the text is the tool\'s result and the agent\'s loop goes on. 409 `not-awaiting-input` when the phase waits for no answer.',
        params: DecisionParams, body: AnswerBody, response: { 200: ToolCallSchema, ...ProblemResponses },
      },
    },
    async (request, reply) =>
      reply.withTransaction((trx) => answerQuestion(settings, trx, { ...request.principal, via: viaOf(request) }, { runId: request.params.runId, phaseRunId: request.params.phaseRunId, text: request.body.text })),
  )
}
