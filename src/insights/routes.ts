// /api/insights: agents' scorecards from operators' decisions (docs/insights.md). Admins and members; agent keys
// are refused by authentication. JSON by default, CSV (all rows) with `Accept: text/csv`.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ProblemResponses } from '../http/schemas.js'
import { decodeCursor } from '../http/pagination.js'
import { LIST_HEADER, SERIES_HEADER, figureCells, toCsv } from './csv.js'
import { agentScorecard, checkFilters, scorecardRows, sortRows, windowOf } from './scorecards.js'
import { AgentIdParams, ScorecardDetail, ScorecardPage, ScorecardQuery, ScorecardsQuery } from './schemas.js'

const wantsCsv = (request: FastifyRequest) => /(^|,)\s*text\/csv\b/i.test(request.headers.accept ?? '')
const OFFSET = /^(0|[1-9][0-9]{0,6})$/

function sendCsv(reply: FastifyReply, name: string, csv: string) {
  return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${name}.csv"`).send(csv)
}

export const insightRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.database

  app.get(
    '/insights/agents',
    {
      schema: {
        operationId: 'listScorecards',
        tags: ['insights'],
        summary: 'Agents\' scorecards over a window',
        description:
          'A row per agent with a phase run that started in `[from, to)` (default: the last 30 days; at most 366), in the stream or cycle given. ' +
          'Sorted by a figure\'s dotted name (`sort`, default `phasesAnswered`; `order` desc by default), nulls last, ties by agentId. ' +
          '`Accept: text/csv` answers every row as CSV.',
        querystring: ScorecardsQuery,
        response: { 200: ScorecardPage, ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const { workspaceId } = request.principal
      const query = request.query
      const window = windowOf(query)
      const offset = Number(decodeCursor(query.cursor, (key) => OFFSET.test(key)) ?? 0)
      await checkFilters(db, workspaceId, query)
      const rows = sortRows(await scorecardRows(db, { workspaceId, ...window, streamId: query.streamId, cycleId: query.cycleId }), query.sort ?? 'phasesAnswered', query.order ?? 'desc')
      if (wantsCsv(request)) {
        return sendCsv(reply, 'scorecards', toCsv(LIST_HEADER, rows.map((row) => [row.agentId, row.agentName, row.providerType, ...figureCells(row)])))
      }
      const limit = query.limit ?? 50
      const data = rows.slice(offset, offset + limit)
      const next = offset + limit < rows.length ? Buffer.from(String(offset + limit)).toString('base64url') : null
      return { window, data, nextCursor: next }
    },
  )

  app.get(
    '/insights/agents/:agentId',
    {
      schema: {
        operationId: 'getScorecard',
        tags: ['insights'],
        summary: 'One agent\'s scorecard with its series and its breakdown per cycle and phase',
        description:
          'The agent\'s row, a series of UTC buckets (`hour` for windows up to 72 hours, else `day`, or as given; at most 1,000) and a breakdown per ' +
          '(cycle, template phase). 404 when the agent never had a phase run in the workspace. `Accept: text/csv` answers the series as CSV.',
        params: AgentIdParams,
        querystring: ScorecardQuery,
        response: { 200: ScorecardDetail, ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const { workspaceId } = request.principal
      const query = request.query
      const window = windowOf(query)
      await checkFilters(db, workspaceId, query)
      const agentId = request.params.agentId.toLowerCase()
      const detail = await agentScorecard(db, { workspaceId, ...window, streamId: query.streamId, cycleId: query.cycleId, agentId }, query.bucket)
      if (wantsCsv(request)) return sendCsv(reply, `scorecard-${agentId}`, toCsv(SERIES_HEADER, detail.series.map((point) => [point.start, point.end, ...figureCells(point)])))
      return detail
    },
  )
}
