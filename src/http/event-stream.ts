// A Server-Sent Events response, opened the one way every live feed opens it (stream events, the inbox): a fair
// share of the connection slots taken first (a 429 past it, before anything is written), the response hijacked
// with the event-stream headers, and the client counted in tandem_sse_clients until it closes.
import type { ServerResponse } from 'node:http'
import type { FastifyReply, FastifyRequest } from 'fastify'

export function openEventStream(request: FastifyRequest, reply: FastifyReply): ServerResponse {
  const app = request.server
  const release = app.heldRequests.take(request.principal.principalId, request.ip)
  reply.hijack()
  const raw = reply.raw
  raw.once('close', release)
  raw.writeHead(200, {
    ...(reply.getHeaders() as Record<string, string>),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  })
  raw.flushHeaders()
  app.metrics.sseClients.inc()
  raw.once('close', () => app.metrics.sseClients.dec())
  return raw
}
