// A webhook receiver for tests: a real HTTP server on 127.0.0.1 that records each request and answers as the
// test says (a status, a redirect, or never).
import http from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Received {
  headers: http.IncomingHttpHeaders
  body: string
  at: number
}

export type Answer = number | 'hang'

export async function startReceiver(answer: (request: Received, index: number) => Answer = () => 200) {
  const received: Received[] = []
  let waiters: Array<() => void> = []
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const entry = { headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() }
      received.push(entry)
      for (const wake of waiters) wake()
      const status = answer(entry, received.length - 1)
      if (status === 'hang') return
      if (status >= 300 && status < 400) response.setHeader('location', 'http://127.0.0.1:9/elsewhere')
      response.writeHead(status).end('{"garbage":')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    /** Resolves once `count` requests have arrived. */
    waitFor(count: number, ms = 10000): Promise<Received[]> {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (received.length >= count) {
            clearTimeout(timer)
            waiters = waiters.filter((w) => w !== check)
            resolve(received.slice(0, count))
          }
        }
        const timer = setTimeout(() => reject(new Error(`received ${received.length} of ${count} requests within ${ms} ms`)), ms)
        waiters.push(check)
        check()
      })
    },
    close: () => {
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
