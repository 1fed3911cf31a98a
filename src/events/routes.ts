// GET /api/streams/{streamId}/events: Server-Sent Events (Accept: text/event-stream) or pages of JSON.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { Page, Problem, ProblemResponses } from '../http/schemas.js'
import { decodeCursor } from '../http/pagination.js'
import { AppError, type FieldError } from '../http/problem.js'
import { StreamIdParams } from '../streams/schemas.js'
import { requireStream } from '../streams/store.js'
import { EVENT_ID_PATTERN, StreamEvent } from './schemas.js'
import { streamHead } from './store.js'
import { eventPageJson, readEventSlice } from './budget.js'
import { SseConnection } from './sse.js'
import { openEventStream } from '../http/event-stream.js'

const EVENT_ID = new RegExp(EVENT_ID_PATTERN)
const EventId = Type.String({ pattern: EVENT_ID_PATTERN, description: 'a decimal event id such as 42 (0: from the start)' })

export const EventsQuery = Type.Object(
  {
    after: Type.Optional(EventId),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false },
)

const EventPage = Type.Object({ ...Page(StreamEvent).properties }, { title: 'StreamEventPage' })

function badPosition(pointer: string, detail: string): AppError {
  return new AppError('validation-error', 'The request has 1 problem; see errors.', [{ pointer, detail }])
}

function wantsEventStream(accept: string | undefined): boolean {
  return accept !== undefined && /(^|,)\s*text\/event-stream\s*(;|,|$)/i.test(accept)
}

export const eventRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.database
  const { sseKeepAliveMs, sseMaxBufferBytes, sseMaxLifetimeMs } = app.config

  app.get(
    '/streams/:streamId/events',
    {
      schema: {
        tags: ['events'],
        operationId: 'listStreamEvents',
        summary: "Follow a stream's events (Server-Sent Events) or read them in pages",
        description:
          'With `Accept: text/event-stream`: Server-Sent Events (`id:`, `event:` = type, `data:` = the event) after `Last-Event-ID` ' +
          'or `?after=`, else new events only, with a `: keep-alive` comment every 15 s; the stream ends after TANDEM_SSE_MAX_LIFETIME_S ' +
          '(reconnect with `Last-Event-ID`), and one key may hold only a share of the connections (429 past it). Otherwise a page of events after `?after=` ' +
          '(or `?cursor=`), oldest first: at most `limit` events and at most 1 MiB (fewer events, with `nextCursor`). An `after` older than the events kept is a 410 `events-expired`.',
        params: StreamIdParams,
        querystring: EventsQuery,
        response: {
          200: {
            description: 'A page of events, or the event stream',
            content: { 'application/json': { schema: EventPage }, 'text/event-stream': { schema: Type.String() } },
          },
          410: Problem,
          ...ProblemResponses,
        },
      },
    },
    async (request, reply) => {
      const { workspaceId } = request.principal
      const stream = await requireStream(db, workspaceId, request.params.streamId)
      const sse = wantsEventStream(request.headers.accept)
      const { after, cursor, limit = 50 } = request.query
      const lastEventId = request.headers['last-event-id']
      const errors: FieldError[] = []
      if (typeof lastEventId === 'string' && !EVENT_ID.test(lastEventId)) errors.push({ pointer: '/headers/last-event-id', detail: 'must be a decimal event id such as 42' })
      if (after !== undefined && cursor !== undefined) errors.push({ pointer: '/query/cursor', detail: 'cannot be combined with after' })
      if (errors.length > 0) throw new AppError('validation-error', `The request has ${errors.length} problem${errors.length === 1 ? '' : 's'}; see errors.`, errors)

      // The client's position: Last-Event-ID (an EventSource resuming keeps its URL's `after`) wins over `after`.
      let position: number | undefined
      let pointer = '/query/after'
      if (sse && typeof lastEventId === 'string') {
        position = Number(lastEventId)
        pointer = '/headers/last-event-id'
      } else if (after !== undefined) position = Number(after)
      else if (cursor !== undefined) {
        position = Number(decodeCursor(cursor, (key) => EVENT_ID.test(key)))
        pointer = '/query/cursor'
      }
      const head = await streamHead(db, stream.id)
      if (position !== undefined && position > head.lastId) throw badPosition(pointer, `is after the stream's latest event (${head.lastId})`)
      if (position !== undefined && position < head.purgedThrough) {
        throw new AppError('events-expired', `Events up to ${head.purgedThrough} are no longer kept (${app.config.eventRetentionDays} days); read the resources again and follow from ${head.lastId}.`)
      }

      if (!sse) {
        // At most `limit` events and 1 MiB (src/events/budget.ts), sent as the events' stored JSON text.
        const slice = await readEventSlice(db, stream.id, position ?? head.purgedThrough, limit)
        return reply.type('application/json; charset=utf-8').send(eventPageJson(slice))
      }

      const raw = openEventStream(request, reply)
      const connection = new SseConnection(raw, db, stream.id, position ?? head.lastId, app.events, { keepAliveMs: sseKeepAliveMs, maxBufferBytes: sseMaxBufferBytes, maxLifetimeMs: sseMaxLifetimeMs }, request.log)
      if (raw.destroyed) connection.close()
    },
  )
}
