// Liveness (/healthz: the process answers) and readiness (/readyz: the database answers).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { sql } from 'kysely'
import Type from 'typebox'
import { AppError } from './http/problem.js'
import { Problem } from './http/schemas.js'

const Status = Type.Object({ status: Type.String() })

export const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/healthz', { schema: { tags: ['health'], operationId: 'checkLiveness', summary: 'Liveness', response: { 200: Status, 421: Problem } } }, async () => ({ status: 'ok' }))

  app.get('/readyz', { schema: { tags: ['health'], operationId: 'checkReadiness', summary: 'Readiness: the database answers', response: { 200: Status, 421: Problem, 503: Problem } } }, async (request) => {
    try {
      await sql`select 1`.execute(app.database.db)
      return { status: 'ready' }
    } catch (error) {
      request.log.warn({ err: error }, 'database is not answering')
      throw new AppError('service-unavailable', 'The database is not answering.')
    }
  })
}
