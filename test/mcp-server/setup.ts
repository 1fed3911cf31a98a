// Shared set-up for the MCP server's tests: the app listening on loopback, and the official SDK's client
// connected to its /mcp with a key.
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'

export async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
}

export interface Connected {
  client: Client
  transport: StreamableHTTPClientTransport
  /**
   * Settles once the server has answered the client's GET /mcp with its event stream, which the SDK opens without
   * waiting after `notifications/initialized`: a notification the server sends before then has no stream to go on.
   */
  streamOpen: Promise<void>
}

export async function connect(base: string, headers: Record<string, string>, sessionId?: string): Promise<Connected> {
  let opened: () => void = () => {}
  const streamOpen = new Promise<void>((resolve) => (opened = resolve))
  const watched: typeof fetch = async (input, init) => {
    const response = await fetch(input, init)
    if (init?.method === 'GET' && response.ok) opened()
    return response
  }
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers }, fetch: watched, ...(sessionId ? { sessionId } : {}) })
  const client = new Client({ name: 'test', version: '1.0.0' })
  await client.connect(transport)
  return { client, transport, streamOpen }
}

/** The result of a tool as a test reads it: isError, the problem or structuredContent, and the sentence. */
export async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = await client.callTool({ name, arguments: args })
  const content = result.content as Array<{ type: string; text: string }>
  const json = JSON.parse(content[1]?.text ?? 'null')
  return { isError: result.isError === true, sentence: content[0]?.text ?? '', body: json, structured: result.structuredContent as any }
}
