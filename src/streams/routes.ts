// /api/streams: create, list and read streams of the caller's workspace.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { IdParams, Page, PageQuery, ProblemResponses } from '../http/schemas.js'
import { decodeCursor, toPage } from '../http/pagination.js'
import { notFound } from '../http/problem.js'
import { CreateStreamBody, Stream } from './schemas.js'
import { findStream, insertStream, listStreams } from './store.js'

export const streamRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.database

  app.post(
    '/streams',
    { config: { idempotent: true }, schema: { tags: ['streams'], operationId: 'createStream', summary: 'Create a stream', body: CreateStreamBody, response: { 201: Stream, ...ProblemResponses } } },
    async (request, reply) => {
      const stream = await reply.withTransaction(async (trx) => {
        const stream = await insertStream(trx, request.principal.workspaceId, request.body)
        reply.code(201).header('location', `/api/streams/${stream.id}`)
        return stream
      })
      return reply.send(stream)
    },
  )

  app.get(
    '/streams',
    { schema: { tags: ['streams'], operationId: 'listStreams', summary: 'List streams, oldest first', querystring: PageQuery, response: { 200: Page(Stream), ...ProblemResponses } } },
    async (request) => {
      const limit = request.query.limit ?? 50
      const rows = await listStreams(db, request.principal.workspaceId, limit + 1, decodeCursor(request.query.cursor))
      return toPage(rows, limit)
    },
  )

  app.get(
    '/streams/:id',
    { schema: { tags: ['streams'], operationId: 'getStream', summary: 'Read a stream', params: IdParams, response: { 200: Stream, ...ProblemResponses } } },
    async (request) => {
      const stream = await findStream(db, request.principal.workspaceId, request.params.id)
      if (!stream) throw notFound('Stream')
      return stream
    },
  )
}
