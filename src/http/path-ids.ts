// Path ids in one place: every path parameter declared as a UUID is lower-cased before the handler
// runs, so routes and stores only ever see the stored (lower-case) form. `/api/agents/0192ABCD-…` finds
// the same agent as its lower-case spelling.
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import fp from 'fastify-plugin'
import { UUID_PATTERN } from './schemas.js'

function uuidParams(schema: unknown): string[] {
  const properties = (schema as { properties?: Record<string, { pattern?: string }> } | undefined)?.properties ?? {}
  return Object.entries(properties).flatMap(([name, property]) => (property.pattern === UUID_PATTERN ? [name] : []))
}

async function pathIds(app: FastifyInstance): Promise<void> {
  // Added per route, only where a UUID parameter exists: other routes pay nothing.
  app.addHook('onRoute', (route) => {
    const names = uuidParams(route.schema?.params)
    if (names.length === 0) return
    const lowerCase = (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) => {
      const params = request.params as Record<string, string>
      for (const name of names) params[name] = (params[name] as string).toLowerCase()
      done()
    }
    route.preHandler = [lowerCase, ...[route.preHandler ?? []].flat()]
  })
}

export const lowerCasePathIds = fp(pathIds, { name: 'tandem-path-ids' })
