// A real MCP server for tests, built with the official SDK (McpServer + StreamableHTTPServerTransport, stateless:
// a fresh server and transport per request) on 127.0.0.1. It records what it receives (the Authorization header
// of every request, every tool call) and can be told to misbehave: answer slowly, answer garbage, list many
// tools, or list or return 10 MB.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { z } from 'zod'

export interface FakeMcpBehaviour {
  /** Wait this long before answering any request. */
  delayMs: number
  /** Answer every request with this body (200, application/json) instead of MCP. */
  garbage: string | null
  /** Extra tools `tool_0000`… listed besides the usual ones. */
  extraTools: number
  /** Give the `echo` tool a description of this many bytes (a huge listing). */
  echoDescriptionBytes: number
  /** `delete_file` records the call, then waits this long before it answers (a call in flight). */
  deleteDelayMs: number
  /** List one more tool whose name has this many characters (`l…`), when > 0. */
  longToolName: number
  /** Refuse every request with 401 and a body that echoes the Authorization header it got (a careless server). */
  echoAuthorization: boolean
}

export interface FakeMcpServer {
  url: string
  behaviour: FakeMcpBehaviour
  /** The Authorization header of every request (undefined when absent). */
  authorizations: (string | undefined)[]
  calls: { name: string; arguments: unknown }[]
  close(): Promise<void>
}

const MB = 1024 * 1024

function buildServer(behaviour: FakeMcpBehaviour, calls: FakeMcpServer['calls']): McpServer {
  const server = new McpServer({ name: 'fake', version: '1.0.0' })
  server.registerTool('echo', { description: behaviour.echoDescriptionBytes > 0 ? 'e'.repeat(behaviour.echoDescriptionBytes) : 'Says the text back.', inputSchema: { text: z.string() } }, async ({ text }) => {
    calls.push({ name: 'echo', arguments: { text } })
    return { content: [{ type: 'text', text: `echo: ${text}` }] }
  })
  server.registerTool('delete_file', { description: 'Deletes a file.', inputSchema: { path: z.string() } }, async ({ path }) => {
    calls.push({ name: 'delete_file', arguments: { path } })
    if (behaviour.deleteDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, behaviour.deleteDelayMs))
    return { content: [{ type: 'text', text: `deleted ${path}` }] }
  })
  server.registerTool('big', { description: 'Returns `bytes` bytes of text.', inputSchema: { bytes: z.number().int() } }, async ({ bytes }) => {
    calls.push({ name: 'big', arguments: { bytes } })
    return { content: [{ type: 'text', text: 'x'.repeat(bytes) }] }
  })
  server.registerTool('huge', { description: 'Returns 10 MB of text.' }, async () => {
    calls.push({ name: 'huge', arguments: {} })
    return { content: [{ type: 'text', text: 'x'.repeat(10 * MB) }] }
  })
  server.registerTool('fail', { description: 'Always reports an error.' }, async () => {
    calls.push({ name: 'fail', arguments: {} })
    return { content: [{ type: 'text', text: 'the disk is full' }], isError: true }
  })
  server.registerTool('throws', { description: 'Throws inside the server.' }, async () => {
    calls.push({ name: 'throws', arguments: {} })
    throw new Error('kaboom')
  })
  if (behaviour.longToolName > 0) server.registerTool('l'.repeat(behaviour.longToolName), { description: 'A long name.' }, async () => ({ content: [{ type: 'text', text: 'long' }] }))
  for (let i = 0; i < behaviour.extraTools; i++) {
    server.registerTool(`tool_${String(i).padStart(4, '0')}`, { description: `Extra tool ${i}.` }, async () => ({ content: [{ type: 'text', text: String(i) }] }))
  }
  return server
}

async function readBody(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  const text = Buffer.concat(chunks).toString('utf8')
  return text ? JSON.parse(text) : undefined
}

export async function startFakeMcpServer(initial: Partial<FakeMcpBehaviour> = {}): Promise<FakeMcpServer> {
  const behaviour: FakeMcpBehaviour = { delayMs: 0, garbage: null, extraTools: 0, echoDescriptionBytes: 0, deleteDelayMs: 0, echoAuthorization: false, longToolName: 0, ...initial }
  const authorizations: (string | undefined)[] = []
  const calls: FakeMcpServer['calls'] = []
  const http = createServer((request: IncomingMessage, response: ServerResponse) => {
    void (async () => {
      authorizations.push(request.headers.authorization)
      const body = await readBody(request)
      if (behaviour.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, behaviour.delayMs))
      if (response.destroyed) return
      if (behaviour.echoAuthorization) {
        response.writeHead(401, { 'content-type': 'text/plain' }).end(`invalid token: ${request.headers.authorization ?? '(none)'}`)
        return
      }
      if (behaviour.garbage !== null) {
        response.writeHead(200, { 'content-type': 'application/json' }).end(behaviour.garbage)
        return
      }
      const server = buildServer(behaviour, calls)
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
      response.on('close', () => {
        void transport.close()
        void server.close()
      })
      await server.connect(transport)
      await transport.handleRequest(request, response, body)
    })().catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500).end(String(error))
    })
  })
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  const { port } = http.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    behaviour,
    authorizations,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections()
        http.close(() => resolve())
      }),
  }
}

/** A URL on 127.0.0.1 where nothing listens (a port just released). */
export async function downMcpUrl(): Promise<string> {
  const http = createServer()
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  const { port } = http.address() as AddressInfo
  await new Promise<void>((resolve) => http.close(() => resolve()))
  return `http://127.0.0.1:${port}/mcp`
}
