// One request's MCP server: the SDK's low-level Server (not McpServer: an unknown tool must stay a JSON-RPC error
// -32602, and arguments are checked here against each tool's schema so that a violation is a tool error naming the
// field). It is built per HTTP request (the session lives in the database, not in the process) for the caller.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Ajv } from 'ajv'
import addFormatsModule from 'ajv-formats'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import {
  CallToolRequestSchema, ErrorCode, ListResourcesRequestSchema, ListResourceTemplatesRequestSchema, ListToolsRequestSchema, McpError,
  ReadResourceRequestSchema, SubscribeRequestSchema, UnsubscribeRequestSchema, type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js'
import { fieldErrors, toProblem } from '../http/problem.js'
import type { Problem } from '../http/schemas.js'
import { listLatestMessages } from '../chat/store.js'
import { sortKey } from '../inbox/items.js'
import type { InboxItem } from '../inbox/schemas.js'
import { TOOLS, TOOL_BY_NAME, type ToolSpec } from './tools.js'
import { outputSchemas } from './output-schemas.js'
import { callTwin, type TwinAnswer } from './twin.js'
import { actOnWait, actsOnWait } from './waits.js'
import { RESOURCE_TEMPLATES, RESOURCES, canonicalUri, resourceOf } from './resources.js'
import { changeSubscription, type McpSession } from './sessions.js'

const addFormats = addFormatsModule.default
const ajv = new Ajv({ allErrors: true, strict: false, messages: true, verbose: true, coerceTypes: false, useDefaults: false })
addFormats(ajv, { mode: 'full' })
const validators = new Map(TOOLS.map((tool) => [tool.name, ajv.compile(tool.input)]))

/** A result is at most this much JSON; a longer page comes shorter, with nextCursor. */
export const MAX_RESULT_BYTES = 1024 * 1024
const RESOURCE_NOT_FOUND = -32002

type Json = Record<string, unknown>

export interface McpContext {
  app: FastifyInstance
  request: FastifyRequest
  session: McpSession | null
}

let schemasOf: Map<string, Json> | null = null

/** The REST problem as a tool error: its detail, then its JSON; no structuredContent. */
function refused(problem: Problem): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: problem.detail }, { type: 'text', text: JSON.stringify(problem) }] }
}

/** REST's pointers into the query string and path name the argument itself (`/query/cursor` → `/cursor`). */
const asArgumentProblem = (problem: Problem): Problem =>
  problem.errors ? { ...problem, errors: problem.errors.map((e) => ({ ...e, pointer: e.pointer.replace(/^\/(?:query|path)(?=\/)/, '') })) } : problem

/** A page cut to MAX_RESULT_BYTES, its cursor the last item kept. */
function bounded(tool: ToolSpec, body: Json): Json {
  if (Buffer.byteLength(JSON.stringify(body)) <= MAX_RESULT_BYTES || !Array.isArray(body.data)) return body
  const data = [...(body.data as Json[])]
  while (data.length > 1 && Buffer.byteLength(JSON.stringify({ ...body, data })) > MAX_RESULT_BYTES) data.pop()
  const last = data[data.length - 1]
  const key = tool.name === 'list_inbox' ? sortKey(last as unknown as InboxItem) : String(last?.id)
  return { ...body, data, ...('nextCursor' in body ? { nextCursor: Buffer.from(key).toString('base64url') } : {}) }
}

/** What a tool answers, before it becomes a result: its twin's body, or the twin's problem. */
export async function runTool(context: McpContext, tool: ToolSpec, args: Json): Promise<TwinAnswer> {
  if (actsOnWait(tool.name)) return actOnWait(context.app, context.request, tool.name, args)
  const answer = await callTwin(context.app, context.request, tool.twin(args))
  if (!answer.ok || tool.name !== 'read_messages') return answer
  // The stream exists in the caller's workspace (the twin said so): its latest messages, oldest first.
  const stream = answer.body as Json
  const data = await listLatestMessages(context.app.database.db, context.request.principal.workspaceId, String(stream.id), (args.limit as number | undefined) ?? 20)
  return { ok: true, status: 200, body: { data } }
}

async function callTool(context: McpContext, name: string, args: Json): Promise<CallToolResult> {
  const tool = TOOL_BY_NAME.get(name)
  if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`)
  const validate = validators.get(name)!
  if (!validate(args)) {
    const errors = fieldErrors(validate.errors ?? [], 'body')
    return refused(toProblem('validation-error', `The arguments have ${errors.length} problem${errors.length === 1 ? '' : 's'}; see errors.`, errors))
  }
  let answer: TwinAnswer
  try {
    answer = await runTool(context, tool, args)
  } catch (error) {
    // As on REST: a failure of ours is logged, and the caller reads only the request id.
    context.request.log.error({ err: error, tool: name }, 'an MCP tool failed')
    return refused(toProblem('internal-error', `Something went wrong on our side; quote request id ${context.request.id} when reporting it.`))
  }
  if (!answer.ok) return refused(asArgumentProblem(answer.problem))
  const body = bounded(tool, tool.shape ? tool.shape(answer.body as Json, args) : (answer.body as Json))
  const sentence = tool.say(body, args).slice(0, 500)
  return { content: [{ type: 'text', text: sentence }, { type: 'text', text: JSON.stringify(body) }], structuredContent: body }
}

function instructions(request: FastifyRequest): string {
  const { handle, role } = request.principal
  return (
    `You act as @${handle ?? 'unknown'} (${role}) in Tandem, a service where agents and people run workflows together. ` +
    'Begin with list_inbox: it lists what waits for you (phases to decide, tool calls to approve, agents\' questions to answer). ' +
    'Decide with decide_phase, decide_tool_call and answer_question; follow the work with get_run and read_messages.'
  )
}

export function createMcpServer(context: McpContext): Server {
  schemasOf ??= outputSchemas(context.app, TOOLS)
  const outputs = schemasOf
  const server = new Server(
    { name: 'tandem', title: 'Tandem', version: '1.0.0' },
    { capabilities: { tools: {}, resources: { subscribe: true } }, instructions: instructions(context.request) },
  )
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: TOOLS.map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: JSON.parse(JSON.stringify(tool.input)) as { type: 'object' },
      outputSchema: outputs.get(tool.name) as { type: 'object' },
      annotations: { title: tool.title, readOnlyHint: tool.hints[0], destructiveHint: tool.hints[1], idempotentHint: tool.hints[2], openWorldHint: tool.hints[3] },
    })),
  }))
  server.setRequestHandler(CallToolRequestSchema, async (request) => callTool(context, request.params.name, (request.params.arguments ?? {}) as Json))
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: RESOURCES }))
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: RESOURCE_TEMPLATES }))
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const body = await readResource(context, request.params.uri)
    return { contents: [{ uri: request.params.uri, mimeType: 'application/json', text: JSON.stringify(body) }] }
  })
  server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    await readResource(context, request.params.uri)
    if (!(await changeSubscription(context.app.database.db, context.session!.id, canonicalUri(request.params.uri), true))) {
      throw new McpError(ErrorCode.InvalidParams, 'A session may hold at most 100 subscriptions; unsubscribe from one first.')
    }
    return {}
  })
  server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
    await changeSubscription(context.app.database.db, context.session!.id, canonicalUri(request.params.uri), false)
    return {}
  })
  return server
}

/** A resource's body: the body of its tool; an unknown URI, or another workspace's resource, is -32002. */
async function readResource(context: McpContext, uri: string): Promise<unknown> {
  const resource = resourceOf(uri)
  const notFound = () => new McpError(RESOURCE_NOT_FOUND, 'Resource not found', { uri })
  if (!resource) throw notFound()
  const tool = TOOL_BY_NAME.get(resource.tool)!
  const answer = await runTool(context, tool, resource.args)
  if (!answer.ok) {
    if (answer.problem.status === 404 || answer.problem.status === 400) throw notFound()
    throw new McpError(ErrorCode.InternalError, answer.problem.detail)
  }
  return bounded(tool, answer.body as Json)
}
