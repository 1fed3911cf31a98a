// Every status a route sends is declared in the OpenAPI document, checked on the suite's own traffic: every app
// the tests build (build() in helpers.ts) records each answer of a documented operation, and when the app closes
// it compares them with the document it serves (app.swagger(), the same object as /openapi.json). An answer
// whose status the operation does not declare (its own code, its class `4XX`, or `default`) fails the close —
// so the test file that sent it fails, naming the operation and the status. Nothing to keep in step by hand:
// a new route, or a new refusal of an old one, is checked the first time a test makes it answer.
//
// Answers outside any documented operation are not the document's business and are not checked: the 404 of an
// unknown path, refusals made before routing (408, 414, 431), the console's files, routes hidden from the
// document.
import type { FastifyInstance } from 'fastify'

type Json = { [key: string]: unknown }
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)

/** Fastify's route URL (`/api/agents/:id`) as the document's path (`/api/agents/{id}`). */
export const documentPath = (url: string): string => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')

/** Whether `responses` (an operation's) declare `status`. */
export function declares(responses: Json, status: number): boolean {
  return String(status) in responses || `${String(status)[0]}XX` in responses || 'default' in responses
}

/** The answers of documented operations whose status the document does not declare, as `METHOD /path → status`. */
export function undeclaredStatuses(document: Json, answers: Iterable<string>): string[] {
  const paths = isObject(document.paths) ? document.paths : {}
  const out: string[] = []
  for (const answer of answers) {
    const [method, path, status] = answer.split(' ') as [string, string, string]
    const operation = (paths[path] as Json | undefined)?.[method.toLowerCase()]
    if (!isObject(operation)) continue
    if (!declares(isObject(operation.responses) ? operation.responses : {}, Number(status))) {
      out.push(`${method} ${path} (${String(operation.operationId)}) → ${status}`)
    }
  }
  return out.sort()
}

const watched = new WeakMap<FastifyInstance, Set<string>>()

/** The answers recorded so far of an app build() made (`METHOD /path status`), for the checker's own test. */
export const answersOf = (app: FastifyInstance): Set<string> | undefined => watched.get(app)

/** The message naming the app's recorded answers the document it serves does not declare; null when there are none. */
export function checkStatuses(app: FastifyInstance): string | null {
  const answers = watched.get(app)
  if (!answers || answers.size === 0) return null
  const undeclared = undeclaredStatuses(app.swagger() as unknown as Json, answers)
  if (undeclared.length === 0) return null
  return `The OpenAPI document does not declare these answers the tests saw (declare each status in the route's response schema, with the shared Problem schema for problems):\n  ${undeclared.join('\n  ')}`
}

/**
 * Records the app's answers (method, documented path, status) and, when it closes, checks them. An undeclared
 * one is printed and fails the test file through its exit code: the close itself goes on (a rejected close would
 * skip the rest of the test's clean-up and leave servers holding the process open). Call before app.ready().
 */
export function watchStatuses(app: FastifyInstance): void {
  const answers = new Set<string>()
  watched.set(app, answers)
  app.addHook('onResponse', async (request, reply) => {
    const url = request.routeOptions.url
    if (url === undefined) return
    answers.add(`${request.method} ${documentPath(url)} ${reply.statusCode}`)
  })
  app.addHook('onClose', async () => {
    const problem = checkStatuses(app)
    if (problem === null) return
    console.error(problem)
    process.exitCode = 1
  })
}
