// What a tool is to the run engine: the name the agent knows it by (`tandem.read_messages`, `<server>.<tool>`),
// what to tell the model, and where a call goes.
import type { Approval } from '../mcp/schemas.js'

export type ToolSource =
  | { kind: 'tandem' }
  | { kind: 'mcp'; serverId: string; serverName: string; url: string; credentialId: string | null; tool: string; approval: Approval }

export interface ToolDefinition {
  /** `tandem.<tool>` or `<server>.<tool>`. */
  name: string
  description: string
  inputSchema: Record<string, unknown>
  source: ToolSource
}
