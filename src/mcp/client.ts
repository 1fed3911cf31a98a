// Talking to a registered MCP server with the official MCP TypeScript SDK client over Streamable HTTP, behind the
// egress guard: every request the SDK makes goes through `guard.fetch`, so the address is checked when Tandem
// connects (never at registration) and a refused address sees no packet. One connection per operation (list
// the tools, call one), bounded by TANDEM_TOOL_TIMEOUT_MS for the whole of it and by a byte budget on all the
// server's answers together; the credential's secret travels as `Authorization: Bearer`.
//
// Every failure — refused, down, slow, not MCP, too big — becomes an McpUnreachableError whose message says
// what happened in the user's words and never holds the secret.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js'
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { readSecret } from '../credentials/store.js'
import { EgressDeniedError, type EgressGuard } from '../net/egress.js'

/** The most tools a server may list (over all its pages), and the most bytes its answers may hold in one operation. */
export const MAX_LISTED_TOOLS = 1000
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024
const MAX_LIST_PAGES = 100
/** The longest tool name Tandem takes (the MCP specification asks for 1–128 characters); a longer one fails the listing. */
export const MAX_TOOL_NAME_LENGTH = 128

export interface McpDeps {
  db: Kysely<Database>
  guard: EgressGuard
  /** TANDEM_TOOL_TIMEOUT_MS: the whole operation (connecting included). */
  timeoutMs: number
}

/** The server as a connection needs it: its workspace (for the credential), name, URL and credential. */
export interface McpTarget {
  workspaceId: string
  name: string
  url: string
  credentialId: string | null
}

export class McpUnreachableError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'McpUnreachableError'
  }
}

interface Budget {
  left: number
  exceeded: boolean
  denied?: EgressDeniedError
}

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304])

// guard.fetch, with every answer's bytes counted against the operation's budget: past it, the body errors and
// the operation is aborted, so a 10 MB answer ends the operation instead of filling memory.
function boundedFetch(guard: EgressGuard, budget: Budget, abort: AbortController): typeof fetch {
  const overBudget = () => {
    budget.exceeded = true
    abort.abort()
    return new McpUnreachableError('answer too large')
  }
  return (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    const signal = init?.signal ? AbortSignal.any([init.signal, abort.signal]) : abort.signal
    let response: Response
    try {
      response = await guard.fetch(input, { ...init, signal })
    } catch (error) {
      if (error instanceof EgressDeniedError) budget.denied = error
      throw error
    }
    if (!response.body || NULL_BODY_STATUSES.has(response.status)) return response
    if (Number(response.headers.get('content-length') ?? 0) > budget.left) {
      const error = overBudget()
      response.body.cancel().catch(() => {})
      throw error
    }
    const counted = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          budget.left -= chunk.byteLength
          if (budget.left < 0) controller.error(overBudget())
          else controller.enqueue(chunk)
        },
      }),
    )
    return new Response(counted, { status: response.status, statusText: response.statusText, headers: response.headers })
  }) as typeof fetch
}

/**
 * The secret taken out of a text a server may have echoed it in (`401 invalid token: Bearer …`), as the vendor
 * adapters do (src/runs/adapters/outcome.ts): the text reaches members (a 502's detail) and runs' warnings.
 */
export function redactSecret(text: string, secret: string | null): string {
  return secret ? text.split(secret).join('…') : text
}

function describeFailure(target: McpTarget, error: unknown, budget: Budget, timedOut: boolean, cancelled: boolean, timeoutMs: number, secret: string | null): McpUnreachableError {
  const where = `The MCP server ${target.name} (${target.url})`
  if (budget.denied) return new McpUnreachableError(`${where} was not contacted: ${budget.denied.message}. An administrator can open a range with TANDEM_EGRESS_ALLOW.`)
  if (budget.exceeded) return new McpUnreachableError(`${where} answered with more than ${MAX_ANSWER_BYTES} bytes; Tandem stopped reading.`)
  if (timedOut) return new McpUnreachableError(`${where} did not answer within ${timeoutMs} ms.`)
  if (cancelled) return new McpUnreachableError(`${where}: the operation was cancelled.`)
  if (error instanceof McpUnreachableError) return new McpUnreachableError(redactSecret(error.message, secret))
  // The SDK checks every message with zod: a ZodError's message is a JSON dump of its issues.
  if (error instanceof Error && (error.name === 'ZodError' || error.message.startsWith('['))) return new McpUnreachableError(`${where} answered with something that is not MCP (JSON-RPC 2.0).`)
  const message = error instanceof Error ? error.message : String(error)
  const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : ''
  // Redacted before it is cut, so that no piece of the secret survives at the cut.
  return new McpUnreachableError(redactSecret(`${where} could not be used: ${message}${cause}`, secret).slice(0, 1000))
}

/**
 * Connects to the server, runs `work` with the client and the options every request must carry, and closes.
 * Throws McpUnreachableError only.
 */
export async function withMcpClient<T>(
  deps: McpDeps,
  target: McpTarget,
  signal: AbortSignal | undefined,
  work: (client: Client, options: RequestOptions, redact: (text: string) => string) => Promise<T>,
): Promise<T> {
  // The SDK is loaded at the first MCP call, not at start-up: most processes (and every test) never make one.
  const [{ Client }, { StreamableHTTPClientTransport }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
  ])
  const abort = new AbortController()
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    abort.abort()
  }, deps.timeoutMs)
  const onCancel = () => abort.abort()
  signal?.addEventListener('abort', onCancel, { once: true })
  const budget: Budget = { left: MAX_ANSWER_BYTES, exceeded: false }
  const client = new Client({ name: 'tandem', version: '1.0.0' })
  let secret: string | null = null
  try {
    if (target.credentialId) {
      secret = await readSecret(deps.db, target.workspaceId, target.credentialId)
      if (secret === null) throw new McpUnreachableError(`The MCP server ${target.name} names the credential ${target.credentialId}, which does not exist in this workspace; set its credentialId to one that does.`)
    }
    const transport = new StreamableHTTPClientTransport(new URL(target.url), {
      fetch: boundedFetch(deps.guard, budget, abort),
      ...(secret !== null ? { requestInit: { headers: { authorization: `Bearer ${secret}` } } } : {}),
    })
    const options: RequestOptions = { signal: abort.signal, timeout: deps.timeoutMs, maxTotalTimeout: deps.timeoutMs }
    // Once aborted (timeout, cancel, too large), the operation ends now, whatever the SDK is still waiting on.
    const aborted = new Promise<never>((_, reject) => {
      if (abort.signal.aborted) reject(new McpUnreachableError('aborted'))
      abort.signal.addEventListener('abort', () => reject(new McpUnreachableError('aborted')), { once: true })
    })
    aborted.catch(() => {})
    return await Promise.race([
      (async () => {
        await client.connect(transport, options)
        return await work(client, options, (text) => redactSecret(text, secret))
      })(),
      aborted,
    ])
  } catch (error) {
    throw describeFailure(target, error, budget, timedOut, signal?.aborted ?? false, deps.timeoutMs, secret)
  } finally {
    clearTimeout(timer)
    signal?.removeEventListener('abort', onCancel)
    // Not awaited: closing must not hold the caller when the server misbehaves.
    client.close().catch(() => {})
  }
}

export interface ListedTool {
  name: string
  description: string
  inputSchema: Record<string, unknown>
}

/** The tools the server lists now, every page of them; more than MAX_LISTED_TOOLS is a failure. */
export async function listMcpTools(deps: McpDeps, target: McpTarget, signal?: AbortSignal): Promise<ListedTool[]> {
  return withMcpClient(deps, target, signal, async (client, options) => {
    const tools: ListedTool[] = []
    let cursor: string | undefined
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const answer = await client.listTools(cursor === undefined ? {} : { cursor }, options)
      for (const tool of answer.tools) {
        if (tool.name.length > MAX_TOOL_NAME_LENGTH || tool.name.length === 0) {
          throw new McpUnreachableError(`The MCP server ${target.name} (${target.url}) lists a tool whose name has ${tool.name.length} characters; a tool name has 1 to ${MAX_TOOL_NAME_LENGTH}.`)
        }
        tools.push({ name: tool.name, description: tool.description ?? '', inputSchema: tool.inputSchema as Record<string, unknown> })
      }
      if (tools.length > MAX_LISTED_TOOLS) throw new McpUnreachableError(`The MCP server ${target.name} (${target.url}) lists more than ${MAX_LISTED_TOOLS} tools; Tandem lists at most ${MAX_LISTED_TOOLS}.`)
      cursor = answer.nextCursor
      if (cursor === undefined) return tools
    }
    throw new McpUnreachableError(`The MCP server ${target.name} (${target.url}) answered more than ${MAX_LIST_PAGES} pages of tools.`)
  })
}
