// A minimal Server-Sent Events client for tests: real sockets, frames parsed as the EventSource spec says.
import http from 'node:http'

export interface SseMessage {
  id?: string
  event?: string
  data?: string
  comment?: string
}

export interface SseStream {
  status: number
  headers: http.IncomingHttpHeaders
  messages: SseMessage[]
  /** Resolves once `count` events (not comments) have arrived; rejects after `ms`. */
  events(count: number, ms?: number): Promise<SseMessage[]>
  /** Resolves when the server ends the response. */
  ended: Promise<void>
  response: http.IncomingMessage
  close(): void
}

export function openEventStream(url: string, headers: Record<string, string> = {}): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers: { accept: 'text/event-stream', ...headers } }, (response) => {
      const messages: SseMessage[] = []
      let buffer = ''
      let waiters: Array<() => void> = []
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => {
        buffer += chunk
        let end
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const frame = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          const message: SseMessage = {}
          for (const line of frame.split('\n')) {
            if (line.startsWith(':')) message.comment = line.slice(1).trim()
            const colon = line.indexOf(':')
            const field = line.slice(0, colon)
            const value = line.slice(colon + 1).replace(/^ /, '')
            if (field === 'id' || field === 'event') message[field] = value
            if (field === 'data') message.data = message.data === undefined ? value : `${message.data}\n${value}`
          }
          messages.push(message)
        }
        for (const wake of waiters) wake()
      })
      const ended = new Promise<void>((done) => {
        response.on('end', done)
        response.on('close', done)
      })
      const eventsOnly = () => messages.filter((m) => m.comment === undefined)
      resolve({
        status: response.statusCode ?? 0,
        headers: response.headers,
        messages,
        response,
        ended,
        events(count, ms = 5000) {
          return new Promise((done, fail) => {
            const check = () => {
              if (eventsOnly().length >= count) {
                clearTimeout(timer)
                waiters = waiters.filter((w) => w !== check)
                done(eventsOnly().slice(0, count))
              }
            }
            const timer = setTimeout(() => fail(new Error(`got ${eventsOnly().length} of ${count} events within ${ms} ms`)), ms)
            waiters.push(check)
            check()
          })
        },
        close() {
          request.destroy()
        },
      })
    })
    request.on('error', reject)
  })
}
