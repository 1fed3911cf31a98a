// A local OTLP/HTTP receiver for the trace tests: it keeps every export's body and content type, answers 200, and
// reads the spans of the JSON exports.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Span {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  kind: number
  attributes: Array<{ key: string; value: Record<string, unknown> }>
  status?: { code?: number }
  links?: Array<{ traceId: string; spanId: string }>
}

export interface Received { body: Buffer; type: string }

export interface OtlpReceiver {
  server: Server
  url: string
  received: Received[]
  /** The spans of every JSON export so far, in the order they arrived. */
  spans(): Span[]
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const received: Received[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', () => {
      received.push({ body: Buffer.concat(chunks), type: String(req.headers['content-type']) })
      res.writeHead(200, { 'content-type': String(req.headers['content-type']) })
      res.end(req.headers['content-type']?.includes('json') ? '{}' : '')
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const spans = () =>
    received.filter((r) => r.type.includes('json')).flatMap((r) => (JSON.parse(r.body.toString()).resourceSpans ?? []).flatMap((rs: any) => rs.scopeSpans.flatMap((ss: any) => ss.spans)))
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, spans }
}

/** A span attribute's value: a string, a number (ints arrive as strings), a boolean, or a list of strings. */
export const attr = (span: Span, key: string): unknown => {
  const value = span.attributes.find((a) => a.key === key)?.value
  if (!value) return undefined
  if ('arrayValue' in value) return ((value.arrayValue as { values?: Array<{ stringValue: string }> }).values ?? []).map((v) => v.stringValue)
  return value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : value.boolValue)
}
