// ElevenLabs client tools (docs/tools-and-approvals.md, "Who calls tools"): during the conversation the agent sends
// `client_tool_call { tool_name, tool_call_id, parameters }` and Tandem answers `client_tool_result` with what the
// tool returned. The tools it answers are the agent's entries that need no one: a call needing an approval, or
// `tandem.ask_operator`, cannot hold a live conversation, so those are not offered (the call is refused as
// unknown). Every call is a row (step 0, as for the task tool route) with its events.
import type { FastifyInstance } from 'fastify'
import type { Agent } from '../../agents/schemas.js'
import { newId, now } from '../../ids.js'
import { MAX_TOOL_INPUT_BYTES } from '../../tools/limits.js'
import { resolveTools } from '../../tools/resolve.js'
import { vendorToolName } from '../../tools/vendor-names.js'
import type { ClientTools } from '../adapters/adapter.js'
import type { Run } from '../schemas.js'
import { markRouteCalls, type TaskRow } from '../store.js'
import { recordToolCallEvent, type ToolCallRow } from './store.js'
import { ASK_OPERATOR } from '../../waits/kinds.js'
import { noteWarnings } from './host.js'
import { finishCall, mcpDeps, performTool, type ToolScope } from './exec.js'

export async function prepareClientTools(app: FastifyInstance, input: { task: TaskRow; run: Run; agent: Agent }, signal: AbortSignal): Promise<ClientTools | null> {
  const { task, run, agent } = input
  if (agent.providerType !== 'elevenlabs' || agent.capabilities.tools.length === 0) return null
  const resolved = await resolveTools(mcpDeps(app), task.workspace_id, agent.capabilities.tools, signal)
  const offered = resolved.tools.filter((tool) => tool.name !== ASK_OPERATOR && !(tool.source.kind === 'mcp' && tool.source.approval === 'always'))
  const skipped = resolved.tools.filter((tool) => !offered.includes(tool)).map((tool) => `The tool ${tool.name} is not offered to an ElevenLabs agent: it waits for an operator, which a live conversation cannot.`)
  await noteWarnings(app, { task, run }, [...resolved.warnings, ...skipped])
  // The agent's client tools are named in ElevenLabs; either Tandem's name or its vendor-safe form is taken.
  const byName = new Map(offered.flatMap((tool) => [[tool.name, tool], [vendorToolName(tool.name), tool]] as const))
  const scope: ToolScope = { workspaceId: task.workspace_id, run, agentId: agent.id, traceparent: task.traceparent }
  const { db } = app.database
  let position = 0
  return {
    async call(name, parameters, callSignal) {
      const tool = byName.get(name)
      const json = JSON.stringify(parameters ?? {})
      const at = now()
      const row: ToolCallRow = {
        id: newId(), workspace_id: task.workspace_id, run_id: run.id, phase_run_id: task.phase_run_id, task_id: task.id, attempt: Number(task.attempt),
        step: 0, position: position++, model_call_id: '', name: tool?.name ?? name, input: json, output: null, error: null, status: 'running',
        approval: null, loop_state: null, dispatched_at: at, started_at: at, finished_at: null,
      }
      const objectInput = parameters !== null && typeof parameters === 'object' && !Array.isArray(parameters)
      const refusal = !tool
        ? `There is no tool named ${name}; the tools offered are: ${offered.map((t) => t.name).join(', ') || 'none'}.`
        : !objectInput ? 'The tool input must be a JSON object.'
        : Buffer.byteLength(json) > MAX_TOOL_INPUT_BYTES ? `The tool input is ${Buffer.byteLength(json)} bytes of JSON; at most ${MAX_TOOL_INPUT_BYTES} are accepted.`
        : null
      if (refusal) Object.assign(row, { status: 'failed', error: refusal, finished_at: at, dispatched_at: null, input: Buffer.byteLength(json) > MAX_TOOL_INPUT_BYTES ? '{"truncated":true}' : json })
      await db.transaction().execute(async (trx) => {
        await markRouteCalls(trx, run.id)
        await trx.insertInto('tool_calls').values(row).execute()
        await recordToolCallEvent(trx, row, run.streamId, 'tool_call.created', scope.traceparent)
      })
      if (refusal) return { ok: false, text: refusal }
      const done = await finishCall(app, scope, row, await performTool(app, scope, tool, row.name, parameters, callSignal))
      return done.status === 'succeeded' ? { ok: true, text: done.output ?? '' } : { ok: false, text: done.error ?? 'The call failed.' }
    },
  }
}
