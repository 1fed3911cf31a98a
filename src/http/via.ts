// How a person's decision came (recorded as `via` on decisions, tool-call approvals and answers): `mcp` from the
// MCP server's tools (src/mcp-server: its wait tools say so to the service; its other in-process calls of a REST
// route carry a mark only this process knows); `console` from the console, whose requests carry
// `Tandem-Client: console` (a label, not a credential); otherwise `api`.
import { randomBytes, timingSafeEqual } from 'node:crypto'
import type { FastifyRequest } from 'fastify'

export type Via = 'api' | 'console' | 'mcp' | 'a2a'
export const VIAS: readonly Via[] = ['api', 'console', 'mcp', 'a2a']

/** The header the MCP server's in-process calls carry, and its value: random per process, never sent out. */
export const MCP_MARK_HEADER = 'tandem-mcp-mark'
export const MCP_MARK = randomBytes(32).toString('hex')

/** Whether the request is an in-process call of the MCP server (it was counted and authenticated at /mcp). */
export function isMcpCall(request: Pick<FastifyRequest, 'headers'>): boolean {
  const mark = request.headers[MCP_MARK_HEADER]
  return typeof mark === 'string' && mark.length === MCP_MARK.length && timingSafeEqual(Buffer.from(mark), Buffer.from(MCP_MARK))
}

export function viaOf(request: Pick<FastifyRequest, 'headers'>): Via {
  if (isMcpCall(request)) return 'mcp'
  return request.headers['tandem-client'] === 'console' ? 'console' : 'api'
}
