// Making one tool call for the run engine, the same way whoever asked for it (the model tool loop, or an agent
// through the task tool route): Tandem's own tools, or an MCP tool through the SDK client behind the egress guard;
// every failure a value. A call is marked dispatched in a committed write before it is made, so a restart never
// makes it again: a dispatched call found unfinished is recorded as interrupted.
import type { FastifyInstance } from 'fastify'
import { now } from '../../ids.js'
import { insertMessage, listLatestMessages } from '../../chat/store.js'
import type { McpDeps } from '../../mcp/client.js'
import { callMcpTool, cutOutput } from '../../tools/mcp-call.js'
import type { ToolDefinition } from '../../tools/definitions.js'
import { MAX_POSTED_TEXT_LENGTH, MAX_READ_MESSAGES } from '../../tools/limits.js'
import { contentOf } from '../machine/machine.js'
import type { Run } from '../schemas.js'
import type { ToolCallRow } from './store.js'
import { recordToolCallEvent } from './store.js'

export const INTERRUPTED = 'Tandem stopped while this call was in flight (a restart); it was not made again, and may or may not have taken effect.'

export type ToolOutcome = { ok: true; output: string } | { ok: false; error: string }

/** Where a call acts: the workspace, the run (its stream), the agent (who posts), the trace. */
export interface ToolScope {
  workspaceId: string
  run: Run
  agentId: string
  traceparent: string | null
}

export const mcpDeps = (app: FastifyInstance): McpDeps => ({ db: app.database.db, guard: app.egress, timeoutMs: app.config.toolTimeoutMs })

export async function performTool(app: FastifyInstance, scope: ToolScope, tool: ToolDefinition | undefined, name: string, input: unknown, signal?: AbortSignal): Promise<ToolOutcome> {
  const { db } = app.database
  if (!tool) return { ok: false, error: `The tool ${name} is no longer offered to this agent.` }
  try {
    if (tool.source.kind === 'mcp') {
      const { source } = tool
      const outcome = await callMcpTool(mcpDeps(app), { workspaceId: scope.workspaceId, name: source.serverName, url: source.url, credentialId: source.credentialId }, source.tool, input, signal ? { signal } : {})
      return outcome.ok ? { ok: true, output: outcome.output } : outcome
    }
    const args = input as Record<string, unknown>
    if (tool.name === 'tandem.read_messages') {
      const limit = args.limit === undefined ? 20 : args.limit
      if (!Number.isInteger(limit) || (limit as number) < 1 || (limit as number) > MAX_READ_MESSAGES) return { ok: false, error: `\`limit\` must be an integer from 1 to ${MAX_READ_MESSAGES}.` }
      const messages = await listLatestMessages(db, scope.workspaceId, scope.run.streamId, limit as number)
      const text = messages.map((m) => `[${m.createdAt}] ${m.authorType} ${m.authorId}: ${m.text}`).join('\n')
      return { ok: true, output: cutOutput(text || '(no messages)').output }
    }
    if (tool.name === 'tandem.post_message') {
      const text = args.text
      if (typeof text !== 'string' || text.trim() === '' || text.length > MAX_POSTED_TEXT_LENGTH) return { ok: false, error: `\`text\` must be a non-empty string of at most ${MAX_POSTED_TEXT_LENGTH.toLocaleString('en-US')} characters.` }
      const { run } = scope
      const message = await db.transaction().execute((trx) =>
        insertMessage(trx, { workspaceId: scope.workspaceId, streamId: run.streamId, authorId: scope.agentId, authorType: 'agent', content: contentOf(text), traceparent: scope.traceparent, origin: { runId: run.id, cycleId: run.cycleId, depth: run.depth } }),
      )
      return { ok: true, output: `Posted message ${message.id}.` }
    }
    return { ok: false, error: `Tandem has no tool ${tool.name}.` }
  } catch (error) {
    return { ok: false, error: `The tool ${name} failed: ${error instanceof Error ? error.message : String(error)}` }
  }
}

/** Records how a call ended, with its `tool_call.updated` event. */
export async function finishCall(app: FastifyInstance, scope: ToolScope, row: ToolCallRow, outcome: ToolOutcome): Promise<ToolCallRow> {
  return app.database.db.transaction().execute(async (trx) => {
    const changes = outcome.ok ? { status: 'succeeded' as const, output: outcome.output, finished_at: now() } : { status: 'failed' as const, error: outcome.error, finished_at: now() }
    // A call settled meanwhile (its task ended with it in flight: store.ts settleEndedCalls) stays as settled.
    const updated = await trx.updateTable('tool_calls').set(changes).where('id', '=', row.id).where('finished_at', 'is', null).returningAll().executeTakeFirst()
    if (!updated) return trx.selectFrom('tool_calls').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow()
    await recordToolCallEvent(trx, updated, scope.run.streamId, 'tool_call.updated', scope.traceparent)
    return updated
  })
}

/** Makes a running call not yet dispatched (marking it first), or records one found in flight as interrupted. */
export async function dispatchCall(app: FastifyInstance, scope: ToolScope, row: ToolCallRow, tool: ToolDefinition | undefined, signal?: AbortSignal): Promise<ToolCallRow> {
  if (row.dispatched_at !== null) return finishCall(app, scope, row, { ok: false, error: INTERRUPTED })
  const marked = await app.database.db.updateTable('tool_calls').set({ dispatched_at: now() }).where('id', '=', row.id).where('dispatched_at', 'is', null).where('status', '=', 'running').executeTakeFirst()
  if (Number(marked.numUpdatedRows) === 0) return finishCall(app, scope, row, { ok: false, error: INTERRUPTED })
  return finishCall(app, scope, row, await performTool(app, scope, tool, row.name, JSON.parse(row.input), signal))
}
