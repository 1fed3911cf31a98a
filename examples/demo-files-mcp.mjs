// A small MCP server for Tandem's tools walk-through (docs/tools-and-approvals.md): a pretend file store with
// `list_files` and `delete_file`, spoken over MCP Streamable HTTP with the official TypeScript SDK, on
// loopback. Nothing on disk is touched: the files are a list in memory, and every call is logged.
//
//   npm run demo-files-mcp      (DEMO_MCP_PORT, default 0: any free port; the URL is printed)
import { createServer } from 'node:http'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { z } from 'zod'

const files = new Set(['/reports/2025.csv', '/reports/old-draft.csv', '/notes/todo.txt'])

function buildServer() {
  const server = new McpServer({ name: 'demo-files', version: '1.0.0' })
  server.registerTool('list_files', { description: 'Lists the files.' }, async () => {
    console.log('demo-files-mcp: list_files')
    return { content: [{ type: 'text', text: [...files].join('\n') }] }
  })
  server.registerTool('delete_file', { description: 'Deletes one file.', inputSchema: { path: z.string() } }, async ({ path }) => {
    console.log(`demo-files-mcp: delete_file ${path}`)
    if (!files.delete(path)) return { content: [{ type: 'text', text: `no file ${path}` }], isError: true }
    return { content: [{ type: 'text', text: `deleted ${path}` }] }
  })
  return server
}

// Stateless: a fresh server and transport for each request, as the SDK's examples do.
const http = createServer(async (request, response) => {
  const chunks = []
  for await (const chunk of request) chunks.push(chunk)
  const text = Buffer.concat(chunks).toString('utf8')
  const server = buildServer()
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
  response.on('close', () => {
    void transport.close()
    void server.close()
  })
  try {
    await server.connect(transport)
    await transport.handleRequest(request, response, text ? JSON.parse(text) : undefined)
  } catch (error) {
    if (!response.headersSent) response.writeHead(400).end(String(error))
  }
})
http.listen(Number(process.env.DEMO_MCP_PORT ?? 0), '127.0.0.1', () => {
  console.log(`demo-files-mcp: listening on http://127.0.0.1:${http.address().port}/mcp`)
})
