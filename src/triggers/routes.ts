// /api message triggers (docs/operators.md "Message triggers"): members and admins set, list and delete them.
import { noCycleWarnings, WithWarnings } from './no-cycle.js'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type, { type Static } from 'typebox'
import { IdParams, Nullable, ProblemResponses, StringEnum, Timestamp, Uuid } from '../http/schemas.js'
import { notFound } from '../http/problem.js'
import { StreamIdParams } from '../streams/schemas.js'
import { requireStream } from '../streams/store.js'
import { deleteMessageTrigger, insertMessageTrigger, listMessageTriggers } from './message-triggers.js'
import { invalid, requireRoomOnStream, TriggerName } from './schemas.js'

const AUTHOR_TYPES = ['principal', 'agent'] as const

const MessageTrigger = Type.Object(
  {
    id: Uuid,
    streamId: Uuid,
    triggerName: Type.String(),
    match: Type.Object({ mention: Nullable(Type.String()), prefix: Nullable(Type.String()), authorType: Nullable(StringEnum(AUTHOR_TYPES)) }),
    createdBy: Type.String(),
    createdAt: Timestamp,
  },
  { title: 'MessageTrigger' },
)

const CreateMessageTriggerBody = Type.Object(
  {
    triggerName: TriggerName,
    match: Type.Object(
      {
        mention: Type.Optional(Type.String({ pattern: '^@?[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$', description: 'a handle, with or without the @' })),
        prefix: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'the message begins with it (e.g. /triage), case-insensitively' })),
        authorType: Type.Optional(StringEnum(AUTHOR_TYPES)),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, title: 'CreateMessageTrigger' },
)
type CreateMessageTriggerBody = Static<typeof CreateMessageTriggerBody>

export const messageTriggerRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.database

  app.post(
    '/streams/:streamId/message-triggers',
    {
      config: { idempotent: true },
      schema: {
        operationId: 'createMessageTrigger', tags: ['triggers'], summary: 'Fire a stream trigger on matching new messages',
        description: 'Every given field of `match` must hold (at least one is needed). The run\'s input is `{ message: { id, text, authorId, authorType } }`. Loop guard: see docs/operators.md. Answers `warnings` (`no-matching-cycle`) when no saved cycle of the stream has the trigger name.',
        params: StreamIdParams, body: CreateMessageTriggerBody, response: { 201: WithWarnings(MessageTrigger, 'CreatedMessageTrigger'), ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const { workspaceId, principalId } = request.principal
      const body: CreateMessageTriggerBody = request.body
      const { mention, prefix, authorType } = body.match
      if (mention === undefined && prefix === undefined && authorType === undefined) {
        throw invalid([{ pointer: '/match', detail: 'needs at least one of mention, prefix or authorType' }])
      }
      const trigger = await reply.withTransaction(async (trx) => {
        const stream = await requireStream(trx, workspaceId, request.params.streamId)
        await requireRoomOnStream(trx, 'message_triggers', stream.id, 'message triggers')
        const created = await insertMessageTrigger(trx, { workspaceId, streamId: stream.id, triggerName: body.triggerName, match: { mention: mention ?? null, prefix: prefix ?? null, authorType: authorType ?? null }, createdBy: principalId })
        return { ...created, ...(await noCycleWarnings(trx, workspaceId, stream.id, body.triggerName)) }
      })
      return reply.code(201).send(trigger)
    },
  )

  app.get(
    '/streams/:streamId/message-triggers',
    {
      schema: {
        operationId: 'listMessageTriggers', tags: ['triggers'], summary: 'List the message triggers of a stream',
        params: StreamIdParams, response: { 200: Type.Object({ data: Type.Array(MessageTrigger) }, { title: 'MessageTriggerList' }), ...ProblemResponses },
      },
    },
    async (request) => {
      const { workspaceId } = request.principal
      const stream = await requireStream(db, workspaceId, request.params.streamId)
      return { data: await listMessageTriggers(db, workspaceId, stream.id) }
    },
  )

  app.delete(
    '/message-triggers/:id',
    { schema: { operationId: 'deleteMessageTrigger', tags: ['triggers'], summary: 'Delete a message trigger', params: IdParams, response: { 204: Type.Null(), ...ProblemResponses } } },
    async (request, reply) => {
      if (!(await deleteMessageTrigger(db, request.principal.workspaceId, request.params.id.toLowerCase()))) throw notFound('Message trigger')
      return reply.code(204).send(null)
    },
  )
}
