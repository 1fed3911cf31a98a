// One call of an MCP tool, as the run engine makes it (docs/tools-and-approvals.md, "Tools", bounds): the input at most 64 KiB of
// JSON (else the call fails without reaching the server), the output given to the model at most 64 KiB (cut, with
// a marker), the whole call within TANDEM_TOOL_TIMEOUT_MS. Every failure is a value — refused, down, slow, not
// MCP, a tool that reports an error — so a tool can never crash a run.
import { withMcpClient, McpUnreachableError, type McpDeps, type McpTarget } from '../mcp/client.js'
import { MAX_TOOL_INPUT_BYTES, MAX_TOOL_OUTPUT_BYTES } from './limits.js'

export type ToolCallOutcome =
  | { ok: true; output: string; truncated: boolean }
  | { ok: false; error: string }

/** `text` cut to at most `limit` UTF-8 bytes (never inside a character), with a marker saying so. */
export function cutOutput(text: string, limit = MAX_TOOL_OUTPUT_BYTES): { output: string; truncated: boolean } {
  const bytes = Buffer.from(text, 'utf8')
  if (bytes.length <= limit) return { output: text, truncated: false }
  const marker = `\n[output cut by Tandem: ${bytes.length} bytes, at most ${limit} are kept]`
  let end = limit - Buffer.byteLength(marker)
  while (end > 0 && ((bytes[end] as number) & 0xc0) === 0x80) end--
  return { output: bytes.subarray(0, end).toString('utf8') + marker, truncated: true }
}

interface ContentPart {
  type: string
  text?: string
}

// The model reads text: text parts as they are, any other part (an image, a resource) as its JSON.
function textOf(content: ContentPart[], structured: unknown): string {
  if (content.length === 0 && structured !== undefined) return JSON.stringify(structured)
  return content.map((part) => (part.type === 'text' && typeof part.text === 'string' ? part.text : JSON.stringify(part))).join('\n')
}

export async function callMcpTool(
  deps: McpDeps,
  server: McpTarget,
  tool: string,
  input: unknown,
  options: { signal?: AbortSignal } = {},
): Promise<ToolCallOutcome> {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return { ok: false, error: 'The tool input must be a JSON object.' }
  const inputBytes = Buffer.byteLength(JSON.stringify(input))
  if (inputBytes > MAX_TOOL_INPUT_BYTES) return { ok: false, error: `The tool input is ${inputBytes} bytes of JSON; at most ${MAX_TOOL_INPUT_BYTES} are accepted.` }
  try {
    // The answer goes to the model and to members (the call's output or error): a server that echoes the credential has it redacted.
    const { result, text } = await withMcpClient(deps, server, options.signal, async (client, requestOptions, redact) => {
      const result = await client.callTool({ name: tool, arguments: input as Record<string, unknown> }, undefined, requestOptions)
      return { result, text: redact(textOf((result.content ?? []) as ContentPart[], result.structuredContent)) }
    })
    if (result.isError) return { ok: false, error: cutOutput(text || `The tool ${server.name}.${tool} reported an error.`).output }
    return { ok: true, ...cutOutput(text) }
  } catch (error) {
    if (error instanceof McpUnreachableError) return { ok: false, error: error.message }
    return { ok: false, error: `The tool ${server.name}.${tool} failed: ${error instanceof Error ? error.message : String(error)}` }
  }
}
