// Unknown routes: 404 problem, or 405 with `Allow` when the path exists under other methods.
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import FindMyWay, { type HTTPMethod } from 'find-my-way'
import { AppError } from './problem.js'

const METHODS: HTTPMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']

async function notFound(app: FastifyInstance): Promise<void> {
  // A second router holding only paths, to tell "no such path" from "no such method here".
  const paths = FindMyWay()
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    for (const method of methods) {
      if (METHODS.includes(method as HTTPMethod) && !paths.hasRoute(method as HTTPMethod, route.url)) paths.on(method as HTTPMethod, route.url, () => {})
    }
  })
  app.setNotFoundHandler(async (request) => {
    const path = request.url.split('?')[0] as string
    const allowed = METHODS.filter((method) => paths.find(method, path) !== null)
    if (allowed.length > 0) {
      throw new AppError('method-not-allowed', `${request.method} is not supported here; use ${allowed.join(', ')}.`, undefined, {
        allow: allowed.join(', '),
      })
    }
    throw new AppError('not-found', `No route matches ${request.method} ${path}.`)
  })
}

export const notFoundProblems = fp(notFound, { name: 'tandem-not-found', dependencies: ['tandem-problems'] })
