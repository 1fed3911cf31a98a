// /api routes of A2A: expose a saved cycle (PATCH its `a2a`), and list the workspace's exposed cycles.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Page, PageQuery, ProblemResponses } from '../http/schemas.js'
import { decodeCursor, toPage } from '../http/pagination.js'
import { notFound } from '../http/problem.js'
import { traceparentFor } from '../http/trace.js'
import { requireStream } from '../streams/store.js'
import { CycleParams, SavedCycle } from '../cycles/schemas.js'
import { toCycle, updateCycleA2a } from '../cycles/store.js'
import { A2aAgent, PatchCycleBody } from './schemas.js'
import { cardUrl } from './card.js'

export const a2aApiRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.database

  app.patch(
    '/cycles/streams/:streamId/cycles/:cycleId',
    {
      schema: {
        tags: ['cycles'], operationId: 'updateCycle', summary: 'Change a saved cycle\'s A2A exposure',
        description: '`a2a`: `{ exposed, skill }` makes the cycle an A2A agent with a public Agent Card (docs/a2a.md); null removes it. Answers the cycle as GET returns it.',
        params: CycleParams, body: PatchCycleBody, response: { 200: SavedCycle, ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const { workspaceId } = request.principal
      return reply.withTransaction(async (trx) => {
        const stream = await requireStream(trx, workspaceId, request.params.streamId)
        const cycle = await updateCycleA2a(trx, workspaceId, stream.id, request.params.cycleId.toLowerCase(), request.body.a2a, traceparentFor(request))
        if (!cycle) throw notFound('Cycle')
        return cycle
      })
    },
  )

  app.get(
    '/a2a/agents',
    {
      schema: {
        tags: ['a2a'], operationId: 'listExposedAgents', summary: 'The workspace\'s exposed cycles, oldest first',
        querystring: PageQuery, response: { 200: Page(A2aAgent), ...ProblemResponses },
      },
    },
    async (request) => {
      const limit = request.query.limit ?? 50
      const after = decodeCursor(request.query.cursor)
      // Exposure lives in the cycle's JSON: read the workspace's cycles that have one, a page at a time.
      let query = db.selectFrom('cycles').selectAll().where('workspace_id', '=', request.principal.workspaceId).where('a2a', 'is not', null).where('a2a', 'like', '%"exposed":true%')
      if (after) query = query.where('id', '>', after)
      const rows = await query.orderBy('id').limit(limit + 1).execute()
      const agents = rows.map(toCycle).map((cycle) => ({ cycleId: cycle.id, streamId: cycle.streamId, name: cycle.a2a?.skill?.name ?? cycle.triggerName, cardUrl: cardUrl(app, cycle.id) }))
      return toPage(agents, limit, (agent) => agent.cycleId)
    },
  )
}
