// The one error class of the service and the handler that turns every failure into RFC 9457 problem details.
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { ErrorObject } from 'ajv'
import type { Problem } from './schemas.js'
import { TransactionContended } from '../db/retry.js'

const KINDS = {
  'validation-error': { status: 400, title: 'Your request is not valid' },
  'malformed-json': { status: 400, title: 'The body is not valid JSON' },
  'malformed-request': { status: 400, title: 'The request is not valid HTTP' },
  'malformed-url': { status: 400, title: 'The URL is not valid' },
  unauthorized: { status: 401, title: 'Authentication required' },
  forbidden: { status: 403, title: 'You may not do this' },
  'not-found': { status: 404, title: 'Not found' },
  'method-not-allowed': { status: 405, title: 'Method not allowed' },
  'proxied-request': { status: 403, title: 'Local mode does not serve requests through a proxy' },
  conflict: { status: 409, title: 'Another request is in the way' },
  'name-taken': { status: 409, title: 'The name is already taken' },
  'events-expired': { status: 410, title: 'The events asked for are no longer kept' },
  'run-finished': { status: 409, title: 'The run has already finished' },
  'not-awaiting-decision': { status: 409, title: 'The phase is not awaiting a decision' },
  'already-approved': { status: 409, title: 'You have already approved this phase' },
  'not-awaiting-approval': { status: 409, title: 'The tool call is not awaiting an approval' },
  'not-awaiting-input': { status: 409, title: 'The phase is not waiting for an answer' },
  'too-many-runs': { status: 409, title: 'The trigger would start too many runs' },
  'run-not-retryable': { status: 409, title: 'Only a failed or canceled run can be retried' },
  'already-retried': { status: 409, title: 'The run has already been retried' },
  'too-many-attempts': { status: 422, title: 'The phase has had as many attempts as it may' },
  'task-closed': { status: 409, title: 'The task no longer takes an answer' },
  'message-streaming': { status: 409, title: 'The message is still being streamed by its agent' },
  'tool-call-awaiting-approval': { status: 409, title: 'A tool call of the task is waiting for an approval' },
  'message-too-long': { status: 409, title: 'The streamed message would pass the chat\'s length bound' },
  'streaming-off': { status: 409, title: 'The agent does not stream (capabilities.streaming is not true)' },
  'precondition-failed': { status: 412, title: 'The resource has changed' },
  'payload-too-large': { status: 413, title: 'The body is too large' },
  'request-timeout': { status: 408, title: 'The request took too long to arrive' },
  'headers-too-large': { status: 431, title: 'The request headers are too large' },
  'uri-too-long': { status: 414, title: 'The URL is too long' },
  'unsupported-media-type': { status: 415, title: 'The body\'s media type is not accepted here' },
  'misdirected-request': { status: 421, title: 'This server does not answer for that host name' },
  unprocessable: { status: 422, title: 'The request cannot be carried out' },
  'idempotency-key-reused': { status: 422, title: 'The idempotency key was used with another request' },
  // Problems of a run (its `error` and its phases' `error`), not answers to a request.
  'agent-unavailable': { status: 422, title: 'The agent cannot be called' },
  'agent-misconfigured': { status: 422, title: 'The agent\'s providerType and authMode cannot work together' },
  'agent-unreachable': { status: 502, title: 'The agent could not be reached' },
  'mcp-unreachable': { status: 502, title: 'The MCP server could not be reached' },
  'agent-rejected': { status: 502, title: 'The agent refused the task' },
  'agent-failed': { status: 502, title: 'The agent reported a failure' },
  'agent-timeout': { status: 504, title: 'The agent did not answer in time' },
  'egress-denied': { status: 403, title: 'The agent\'s address is not allowed' },
  'phase-rejected': { status: 422, title: 'An operator rejected the phase' },
  'decision-expired': { status: 422, title: 'No one decided the phase in time' },
  'rate-limited': { status: 429, title: 'Too many requests' },
  'internal-error': { status: 500, title: 'Internal server error' },
  'bad-gateway': { status: 502, title: 'The model returned an unusable answer' },
  'service-unavailable': { status: 503, title: 'Service unavailable' },
  'gateway-timeout': { status: 504, title: 'The model did not answer in time' },
} as const

export type ProblemKind = keyof typeof KINDS
export type FieldError = { pointer: string; detail: string }

export const PROBLEM_TYPE_BASE = 'urn:tandem:problem:'

export function problemKinds(): Array<{ type: string; status: number; title: string }> {
  return Object.entries(KINDS).map(([kind, { status, title }]) => ({ type: PROBLEM_TYPE_BASE + kind, status, title }))
}

export class AppError extends Error {
  readonly status: number
  readonly kind: ProblemKind
  readonly errors?: FieldError[]
  readonly headers?: Record<string, string>
  /** Extension members of the problem document (e.g. `retriedBy`), each declared in the Problem schema. */
  readonly extensions?: Record<string, string>

  constructor(
    kind: ProblemKind,
    detail: string,
    errors?: FieldError[],
    headers?: Record<string, string>,
    extensions?: Record<string, string>,
  ) {
    super(detail)
    this.kind = kind
    this.errors = errors
    this.headers = headers
    this.extensions = extensions
    this.name = 'AppError'
    this.status = KINDS[kind].status
  }
}

export function notFound(what: string): AppError {
  return new AppError('not-found', `${what} was not found`)
}

export function toProblem(kind: ProblemKind, detail: string, errors?: FieldError[]): Problem {
  const problem: Problem = { type: PROBLEM_TYPE_BASE + kind, title: KINDS[kind].title, status: KINDS[kind].status, detail }
  if (errors && errors.length > 0) problem.errors = errors
  return problem
}

/** The answer when a transaction met a deadlock or a serialization failure on every attempt (src/db/retry.ts): a 503, sent with Retry-After. */
export function contendedProblem(): Problem {
  return toProblem('service-unavailable', 'The database was too busy with other changes to this data to carry the request out; nothing was changed. Retry shortly.')
}

const PART_PREFIX: Record<string, string> = { body: '', params: '/path', querystring: '/query', headers: '/headers' }

/** "1 character", "2 characters": every count a person reads is in the right number. */
export function count(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`
}

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'a whole number',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
}

function describe(error: ErrorObject): { pointer: string; detail: string } {
  const at = error.instancePath
  const limit = error.params.limit as number
  switch (error.keyword) {
    case 'required':
      return { pointer: `${at}/${error.params.missingProperty}`, detail: 'is required' }
    case 'additionalProperties':
      return { pointer: `${at}/${error.params.additionalProperty}`, detail: 'is not an allowed property' }
    case 'enum':
      return { pointer: at, detail: `must be one of: ${(error.params.allowedValues as unknown[]).join(', ')}` }
    case 'const':
      return { pointer: at, detail: `must be ${JSON.stringify(error.params.allowedValue)}` }
    case 'pattern':
    case 'format':
      return { pointer: at, detail: error.parentSchema?.description ? `must be ${error.parentSchema.description}` : `is not in the expected form${error.params.format ? ` (${error.params.format})` : ''}` }
    case 'minLength':
      return { pointer: at, detail: `must be at least ${count(limit, 'character')} long (Unicode code points)` }
    case 'maxLength':
      return { pointer: at, detail: `must be at most ${count(limit, 'character')} long (Unicode code points)` }
    case 'minItems':
      return { pointer: at, detail: `must have at least ${count(limit, 'item')}` }
    case 'maxItems':
      return { pointer: at, detail: `must have at most ${count(limit, 'item')}` }
    case 'minProperties':
      return { pointer: at, detail: `must have at least ${count(limit, 'property', 'properties')}` }
    case 'maxProperties':
      return { pointer: at, detail: `must have at most ${count(limit, 'property', 'properties')}` }
    case 'minimum':
      return { pointer: at, detail: `must be at least ${limit}` }
    case 'maximum':
      return { pointer: at, detail: `must be at most ${limit}` }
    case 'exclusiveMinimum':
      return { pointer: at, detail: `must be more than ${limit}` }
    case 'exclusiveMaximum':
      return { pointer: at, detail: `must be less than ${limit}` }
    case 'uniqueItems':
      return { pointer: at, detail: `must not hold the same item twice (items ${error.params.j} and ${error.params.i} are equal)` }
    case 'x-max-serialized-bytes':
      return { pointer: at, detail: `must be at most ${count(error.schema as number, 'byte')} when written as JSON (UTF-8)` }
    case 'type':
      return { pointer: at, detail: `must be ${[error.params.type].flat().map((type) => TYPE_WORDS[type as string] ?? type).join(' or ')}` }
    default:
      return { pointer: at, detail: error.message ?? 'is not valid' }
  }
}

/** Ajv errors → field errors, one per offending location, in document order of appearance. */
export function fieldErrors(validation: ErrorObject[], part: string): FieldError[] {
  const prefix = PART_PREFIX[part] ?? ''
  const seen = new Set<string>()
  const result: FieldError[] = []
  for (const error of validation) {
    // `if`/`anyOf` wrappers repeat what their branches already said.
    if (error.keyword === 'if' || error.keyword === 'anyOf' || error.keyword === 'oneOf') continue
    const { pointer, detail } = describe(error)
    const key = `${prefix}${pointer}\u0000${detail}`
    if (seen.has(key)) continue
    seen.add(key)
    result.push({ pointer: prefix + pointer, detail })
  }
  return result
}

function sendProblem(reply: FastifyReply, problem: Problem, headers?: Record<string, string>): FastifyReply {
  if (headers) reply.headers(headers)
  return reply.code(problem.status).type('application/problem+json; charset=utf-8').send(problem)
}

function classify(error: FastifyError): { kind: ProblemKind; detail: string; errors?: FieldError[] } | null {
  if (error.validation) {
    const errors = fieldErrors(error.validation as ErrorObject[], error.validationContext ?? 'body')
    const where = error.validationContext === 'querystring' ? 'query string' : error.validationContext === 'params' ? 'path' : 'body'
    return { kind: 'validation-error', detail: `The ${where} has ${errors.length} problem${errors.length === 1 ? '' : 's'}; see errors.`, errors }
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { kind: 'unsupported-media-type', detail: 'Send the body with Content-Type: application/json.' }
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { kind: 'payload-too-large', detail: 'The body must be at most 1 MiB (1048576 bytes).' }
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { kind: 'malformed-json', detail: 'The body is empty; send a JSON object.' }
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { kind: 'malformed-json', detail: 'The Content-Length does not match the body.' }
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { kind: 'malformed-json', detail: 'The body is not valid JSON.' }
  }
  if (error instanceof SyntaxError || (error.statusCode === 400 && /JSON|prototype|constructor/i.test(error.message))) {
    return { kind: 'malformed-json', detail: /prototype|constructor/i.test(error.message) ? 'The body may not use __proto__ or constructor.prototype keys.' : 'The body is not valid JSON.' }
  }
  if (error.statusCode === 413) return { kind: 'payload-too-large', detail: 'The request is too large.' }
  if (error.statusCode === 415) return { kind: 'unsupported-media-type', detail: 'Send the body with Content-Type: application/json.' }
  return null
}

/** The one error handler: every failure becomes an RFC 9457 problem document. */
export const problemDetails = fp(
  async (app: FastifyInstance) => {
    app.setErrorHandler(handleError)
  },
  { name: 'tandem-problems', fastify: '5.x' },
)

function handleError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof AppError) {
    return sendProblem(reply, { ...toProblem(error.kind, error.message, error.errors), ...error.extensions }, error.headers)
  }
  if (error instanceof TransactionContended) {
    // Every attempt met a deadlock or a serialization failure (src/db/retry.ts): nothing was changed, and the
    // same request a moment later usually goes through.
    request.log.warn({ err: error, reqId: request.id }, 'a transaction stayed contended after its retries')
    return sendProblem(reply, contendedProblem(), { 'retry-after': '1' })
  }
  const known = classify(error)
  if (known) return sendProblem(reply, toProblem(known.kind, known.detail, known.errors))
  if (error.statusCode === 429) {
    return sendProblem(reply, toProblem('rate-limited', error.message), { 'retry-after': String(reply.getHeader('retry-after') ?? 1) })
  }
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    request.log.info({ err: error }, 'client error without a problem kind')
    return sendProblem(reply, {
      type: PROBLEM_TYPE_BASE + 'bad-request',
      title: 'Bad request',
      status: error.statusCode,
      detail: error.message,
    })
  }
  request.log.error({ err: error, reqId: request.id }, 'unhandled error')
  return sendProblem(reply, toProblem('internal-error', `Something went wrong on our side; quote request id ${request.id} when reporting it.`))
}

/**
 * Errors Node's HTTP parser reports before a request exists (headers too large, a request that does not
 * arrive in time, bytes that are not HTTP): answered as problem documents too, then the connection closes.
 */
export function clientErrorHandler(this: FastifyInstance, error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const problem =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? toProblem('headers-too-large', 'The request headers must be at most 16 KiB together.')
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? toProblem('request-timeout', 'The request did not arrive within the request time-out (TANDEM_REQUEST_TIMEOUT_MS).')
        : toProblem('malformed-request', 'The request is not valid HTTP.')
  const body = JSON.stringify(problem)
  this.log.trace({ err: error }, 'client error')
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}\r\nConnection: close\r\nContent-Type: application/problem+json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Content-Type-Options: nosniff\r\n\r\n${body}`,
    )
  }
  socket.destroy(error)
}
