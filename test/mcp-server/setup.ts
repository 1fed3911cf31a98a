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
}

export async function connect(base: string, headers: Record<string, string>, sessionId?: string): Promise<Connected> {
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers }, ...(sessionId ? { sessionId } : {}) })
  const client = new Client({ name: 'test', version: '1.0.0' })
  await client.connect(transport)
  return { client, transport }
}

/** The result of a tool as a test reads it: isError, the problem or structuredContent, and the sentence. */
export async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = await client.callTool({ name, arguments: args })
  const content = result.content as Array<{ type: string; text: string }>
  const json = JSON.parse(content[1]?.text ?? 'null')
  return { isError: result.isError === true, sentence: content[0]?.text ?? '', body: json, structured: result.structuredContent as any }
}
