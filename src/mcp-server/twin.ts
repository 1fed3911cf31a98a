// A tool's REST twin, called in-process (the tools that act on a wait call the service functions instead: waits.ts):
// the same route, and so the same service function, validation, idempotency, events and problem as a REST call, in
// one transaction. The call carries the /mcp request's
// own Authorization (the same key and principal) and the process's MCP mark, which makes the decision's `via`
// "mcp" and keeps it from counting against the rate limits a second time (the /mcp request counted once).
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { MCP_MARK, MCP_MARK_HEADER } from '../http/via.js'
import type { Problem } from '../http/schemas.js'

export interface TwinCall {
  method: 'GET' | 'POST' | 'DELETE'
  url: string
  query?: Record<string, string | number | boolean | undefined>
  body?: unknown
  idempotencyKey?: string
}

export type TwinAnswer = { ok: true; status: number; body: unknown } | { ok: false; problem: Problem }

const segment = (value: unknown) => encodeURIComponent(String(value))

/** `/api/runs/${id}` with every interpolated value percent-encoded. */
export const path = (strings: TemplateStringsArray, ...values: unknown[]) => strings.reduce((url, part, i) => url + part + (i < values.length ? segment(values[i]) : ''), '')

export async function callTwin(app: FastifyInstance, request: FastifyRequest, call: TwinCall): Promise<TwinAnswer> {
  const query = Object.entries(call.query ?? {}).filter(([, v]) => v !== undefined).map(([k, v]) => `${encodeURIComponent(k)}=${segment(v)}`)
  const headers: Record<string, string> = { [MCP_MARK_HEADER]: MCP_MARK, host: request.headers.host ?? 'localhost' }
  if (request.headers.authorization) headers.authorization = request.headers.authorization
  // The twin continues the /mcp request's trace, as a REST call would continue its own.
  if (typeof request.headers.traceparent === 'string') headers.traceparent = request.headers.traceparent
  if (call.idempotencyKey !== undefined) headers['idempotency-key'] = call.idempotencyKey
  if (call.body !== undefined) headers['content-type'] = 'application/json'
  const response = await app.inject({
    method: call.method,
    url: query.length ? `${call.url}?${query.join('&')}` : call.url,
    headers,
    remoteAddress: request.ip,
    ...(call.body !== undefined ? { payload: JSON.stringify(call.body) } : {}),
  })
  const body = response.body === '' ? null : (JSON.parse(response.body) as unknown)
  if (response.statusCode >= 400) return { ok: false, problem: body as Problem }
  return { ok: true, status: response.statusCode, body }
}
