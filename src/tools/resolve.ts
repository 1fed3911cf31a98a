// Turns an agent's `capabilities.tools` entries into the tools a run offers, with a warning for each entry that
// names no tool (docs/tools-and-approvals.md: such entries are ignored at run time, with a warning in the phase). MCP servers are
// asked for their tools now, once per server named; a server that cannot be reached becomes a warning too.
import { A2A_PREFIX } from '../a2a/names.js'
import { approvalOf } from '../mcp/approval.js'
import { listMcpTools, McpUnreachableError, type McpDeps } from '../mcp/client.js'
import { findMcpServerByName } from '../mcp/store.js'
import type { McpServer } from '../mcp/schemas.js'
import type { ToolDefinition } from './definitions.js'
import { TANDEM_TOOLS } from './tandem-tools.js'

export interface ResolvedTools {
  tools: ToolDefinition[]
  warnings: string[]
}

type ServerTools = { server: McpServer; tools: ToolDefinition[] } | { error: string }

async function toolsOfServer(deps: McpDeps, workspaceId: string, name: string, signal?: AbortSignal): Promise<ServerTools> {
  const server = await findMcpServerByName(deps.db, workspaceId, name)
  if (!server) return { error: `no MCP server named ${name} in this workspace` }
  try {
    const listed = await listMcpTools(deps, { ...server, workspaceId }, signal)
    const tools = listed.map((tool): ToolDefinition => ({
      name: `${server.name}.${tool.name}`,
      description: tool.description,
      inputSchema: tool.inputSchema,
      source: { kind: 'mcp', serverId: server.id, serverName: server.name, url: server.url, credentialId: server.credentialId, tool: tool.name, approval: approvalOf(server.approval, tool.name) },
    }))
    return { server, tools }
  } catch (error) {
    if (error instanceof McpUnreachableError) return { error: error.message }
    throw error
  }
}

/** The tools named by `entries`, in entry order, each once; never throws for a server that cannot be reached. */
export async function resolveTools(deps: McpDeps, workspaceId: string, entries: readonly string[], signal?: AbortSignal): Promise<ResolvedTools> {
  const tools = new Map<string, ToolDefinition>()
  const warnings: string[] = []
  const servers = new Map<string, Promise<ServerTools>>()
  for (const entry of entries) {
    const dot = entry.indexOf('.')
    const prefix = dot > 0 ? entry.slice(0, dot) : ''
    const toolName = entry.slice(dot + 1)
    if (dot <= 0 || toolName === '') {
      warnings.push(`The tool entry "${entry}" names no tool: use tandem.<tool>, <server>.<tool> or <server>.*.`)
      continue
    }
    if (prefix === 'tandem') {
      const tool = TANDEM_TOOLS.find((t) => t.name === entry)
      if (tool) tools.set(tool.name, tool)
      else warnings.push(`The tool entry "${entry}" names no tool: Tandem's tools are ${TANDEM_TOOLS.map((t) => t.name).join(', ')}.`)
      continue
    }
    // `a2a.authorize` is Tandem's own wait for a remote A2A agent's authorization, never a tool an agent is given:
    // an MCP server named a2a does not stand in for it, as one named tandem does not stand in for Tandem's tools.
    if (prefix === A2A_PREFIX) {
      warnings.push(`The tool entry "${entry}" names no tool: ${A2A_PREFIX}.* is Tandem's own name for a remote A2A agent's authorization, not a tool.`)
      continue
    }
    let pending = servers.get(prefix)
    if (!pending) servers.set(prefix, (pending = toolsOfServer(deps, workspaceId, prefix, signal)))
    const found = await pending
    if ('error' in found) {
      warnings.push(`The tool entry "${entry}" was skipped: ${found.error}`)
      continue
    }
    const matching = toolName === '*' ? found.tools : found.tools.filter((t) => t.name === entry)
    if (matching.length === 0) warnings.push(`The tool entry "${entry}" names no tool: the MCP server ${prefix} lists no tool ${toolName}.`)
    for (const tool of matching) tools.set(tool.name, tool)
  }
  return { tools: [...tools.values()], warnings }
}
