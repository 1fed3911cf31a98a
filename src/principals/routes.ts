// GET /api/me: who the caller is (every key may ask, agent keys included).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { Nullable, ProblemResponses, Uuid } from '../http/schemas.js'
import { HANDLE_PATTERN } from './handles.js'

export const Me = Type.Object({
  principalId: Uuid,
  handle: Type.String({ pattern: HANDLE_PATTERN }),
  role: Type.Union([Type.Literal('admin'), Type.Literal('member'), Type.Literal('agent')]),
  workspaceId: Uuid,
  agentId: Nullable(Uuid),
})

export const principalRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/me',
    {
      config: { agentKeys: true },
      schema: { tags: ['principals'], summary: 'Who the caller is', response: { 200: Me, ...ProblemResponses } },
    },
    async (request) => {
      const { principalId, handle, role, workspaceId, agentId } = request.principal
      return { principalId, handle, role, workspaceId, agentId }
    },
  )
}
