// A webhook agent for tests: a real HTTP server on 127.0.0.1 that records every delivery and answers as told.
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { waitFor as waitUntil } from '../wait.js'

export interface Delivery {
  headers: IncomingHttpHeaders
  body: any
  raw: string
}

export type Answer = { status: number; body?: unknown; headers?: Record<string, string> } | 'hang' | 'destroy'

export interface AgentServer {
  url: string
  deliveries: Delivery[]
  /** Decides the answer to each delivery (default: 200 with an output echoing the phase name). */
  answer: (delivery: Delivery) => Answer | Promise<Answer>
  close(): Promise<void>
}

export async function startAgentServer(answer?: AgentServer['answer']): Promise<AgentServer> {
  const state: AgentServer = {
    url: '',
    deliveries: [],
    answer: answer ?? ((d) => ({ status: 200, body: { output: { text: `done: ${d.body.phase.phaseName} #${d.body.task.attempt}` } } })),
    close: async () => {},
  }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', async () => {
      const raw = Buffer.concat(chunks).toString('utf8')
      const delivery: Delivery = { headers: req.headers, body: JSON.parse(raw), raw }
      state.deliveries.push(delivery)
      const reply = await state.answer(delivery)
      if (reply === 'hang') return
      if (reply === 'destroy') return req.socket.destroy()
      res.writeHead(reply.status, { 'content-type': 'application/json', ...(reply.headers ?? {}) })
      res.end(reply.body === undefined ? '' : typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
  state.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  return state
}

/** test/wait.ts's waitFor with positional arguments, as many tests call it. */
export function waitFor<T>(check: () => Promise<T | undefined> | T | undefined, ms = 10000, what = 'condition'): Promise<NonNullable<T>> {
  return waitUntil(check, { timeoutMs: ms, what })
}
