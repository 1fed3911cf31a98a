// A scripted local HTTP server for the vendor fakes: records every request and answers each with the next
// scripted step (the last one repeats), optionally late or with a raw body.
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Exchange {
  method: string
  path: string
  url: URL
  headers: IncomingHttpHeaders
  body: any
}

export interface Reply {
  status?: number
  headers?: Record<string, string>
  body?: unknown
  /** Sent as is instead of JSON. */
  raw?: string
  delayMs?: number
  /** Writes the answer itself (a stream of Server-Sent Events); the fake leaves the response to it. */
  stream?: (res: ServerResponse) => void
}

export interface HttpFake {
  url: string
  server: Server
  requests: Exchange[]
  close(): Promise<void>
}

export async function startHttpFake(route: (exchange: Exchange) => Reply | Promise<Reply>): Promise<HttpFake> {
  const requests: Exchange[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', async () => {
      const text = Buffer.concat(chunks).toString('utf8')
      let body: unknown = text
      try {
        body = text ? JSON.parse(text) : undefined
      } catch {
        // not JSON: kept as text
      }
      const url = new URL(req.url ?? '/', 'http://127.0.0.1')
      const exchange: Exchange = { method: req.method ?? 'GET', path: url.pathname, url, headers: req.headers, body }
      requests.push(exchange)
      const reply = await route(exchange)
      const timer = setTimeout(() => {
        if (reply.stream) return reply.stream(res)
        const headers = { 'content-type': 'application/json', ...reply.headers }
        res.writeHead(reply.status ?? 200, headers).end(reply.raw ?? (reply.body === undefined ? '' : JSON.stringify(reply.body)))
      }, reply.delayMs ?? 0)
      res.on('close', () => clearTimeout(timer))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** A queue of scripted steps: each call takes the next, and the last one stays. */
export function script<T>(initial: T) {
  const steps: T[] = [initial]
  return {
    set(...next: T[]) {
      steps.splice(0, steps.length, ...next)
    },
    take(): T {
      return (steps.length > 1 ? steps.shift() : steps[0]) as T
    },
  }
}

/** A reply for the common failure steps, or null for a success step. */
export function failureReply(step: { status?: number; raw?: string; delayMs?: number; retryAfter?: string }): Reply | null {
  if (step.status !== undefined && step.status !== 200) {
    return { status: step.status, body: { error: { type: 'error', message: `scripted status ${step.status}` } }, ...(step.retryAfter ? { headers: { 'retry-after': step.retryAfter } } : {}) }
  }
  if (step.raw !== undefined) return { raw: step.raw, delayMs: step.delayMs ?? 0 }
  return null
}
