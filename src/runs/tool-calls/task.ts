// The task tool route (docs/tools-and-approvals.md, "Who calls tools"): a custom_webhook or custom_token_only agent with tools finds
// them in its task payload (`tools`, `toolsUrl`) and calls one with `POST /api/tasks/{taskId}/tools/{name}`.
// A call that needs no one is made in the request (200); one that needs an approval, or a question, waits (202)
// with the phase `awaiting_tool_approval` / `awaiting_input` until an operator acts, and the agent reads it with
// `GET /api/tasks/{taskId}/tool-calls/{callId}?waitSeconds`. An approved call is made by a job keyed by the call.
// Calls of this route are rows with `step` 0.
import type { FastifyInstance } from 'fastify'
import type { Agent } from '../../agents/schemas.js'
import { findAgent } from '../../agents/store.js'
import { AppError, notFound } from '../../http/problem.js'
import { newId, now } from '../../ids.js'
import type { JobHandler, JobPayloads } from '../../jobs/index.js'
import { MAX_TOOL_INPUT_BYTES } from '../../tools/limits.js'
import { resolveTools } from '../../tools/resolve.js'
import type { TaskPayload } from '../adapters/adapter.js'
import { withLockedRun } from '../machine/locked.js'
import { persistRun } from '../machine/machine.js'
import type { Run } from '../schemas.js'
import { findRun, findTask, markRouteCalls, type TaskRow } from '../store.js'
import { publicBase } from '../tasks/payload.js'
import { snapshotOf } from '../machine/transitions.js'
import { CALL_TOOL_JOB, callsOfTask, recordToolCallEvent, type ToolCallApproval, type ToolCallRow } from './store.js'
import { ASK_OPERATOR, waitingStatus } from '../../waits/kinds.js'
import { A2A_AUTHORIZE } from '../../a2a/names.js'
import { noteWarnings } from './host.js'
import { dispatchCall, finishCall, mcpDeps, performTool, type ToolScope } from './exec.js'

export const TASK_TOOL_PROVIDERS: ReadonlySet<string> = new Set(['custom_webhook', 'custom_token_only'])

async function toolsOf(app: FastifyInstance, task: TaskRow, run: Run, agent: Agent, signal?: AbortSignal) {
  const resolved = await resolveTools(mcpDeps(app), task.workspace_id, agent.capabilities.tools, signal)
  await noteWarnings(app, { task, run }, resolved.warnings)
  return resolved.tools
}

/** Adds `tools` and `toolsUrl` to the payload of a webhook or token-only agent that has tools. */
export async function addTaskTools(app: FastifyInstance, payload: TaskPayload, input: { task: TaskRow; run: Run; agent: Agent }, signal?: AbortSignal): Promise<void> {
  const { task, run, agent } = input
  if (!TASK_TOOL_PROVIDERS.has(agent.providerType) || agent.capabilities.tools.length === 0) return
  const tools = await toolsOf(app, task, run, agent, signal)
  payload.tools = tools.map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema }))
  payload.toolsUrl = `${publicBase(app)}/api/tasks/${task.id}/tools`
}

const badInput = (detail: string) => new AppError('validation-error', 'The body has 1 problem; see errors.', [{ pointer: '/input', detail }])

/** One call through the task tool route: made now (200), or waiting for an operator (202). */
export async function callTaskTool(app: FastifyInstance, task: TaskRow, name: string, input: unknown): Promise<{ waiting: boolean; call: ToolCallRow }> {
  const { db } = app.database
  if (task.state !== 'open') throw new AppError('task-closed', `The task is ${task.state}; its tools can no longer be called.`)
  const [run, agent] = await Promise.all([findRun(db, task.workspace_id, task.run_id), findAgent(db, task.workspace_id, task.agent_id)])
  if (!run || !agent) throw new AppError('task-closed', 'The task\'s run or agent no longer exists.')
  const tools = TASK_TOOL_PROVIDERS.has(agent.providerType) ? await toolsOf(app, task, run, agent) : []
  const tool = tools.find((t) => t.name === name)
  if (!tool) throw notFound(`Tool ${name} (this agent's tools: ${tools.map((t) => t.name).join(', ') || 'none'})`)
  if (input === null || typeof input !== 'object' || Array.isArray(input)) throw badInput('must be a JSON object')
  const json = JSON.stringify(input)
  if (Buffer.byteLength(json) > MAX_TOOL_INPUT_BYTES) throw badInput(`must be at most ${MAX_TOOL_INPUT_BYTES} bytes as JSON (64 KiB); this one is ${Buffer.byteLength(json)}`)
  const question = tool.name === ASK_OPERATOR
  if (question && (typeof (input as Record<string, unknown>).question !== 'string' || ((input as Record<string, unknown>).question as string).trim() === '')) throw badInput('must have a non-empty `question`')
  const approval = tool.source.kind === 'mcp' && tool.source.approval === 'always'
  const at = now()
  const row: ToolCallRow = {
    id: newId(), workspace_id: task.workspace_id, run_id: run.id, phase_run_id: task.phase_run_id, task_id: task.id, attempt: Number(task.attempt),
    step: 0, position: 0, model_call_id: '', name: tool.name, input: json, output: null, error: null,
    status: approval ? 'awaiting_approval' : 'running',
    approval: approval ? JSON.stringify({ required: true, decision: null, note: null, principalId: null, handle: null, at: null } satisfies ToolCallApproval) : null,
    loop_state: null, dispatched_at: approval || question ? null : at, started_at: at, finished_at: null,
  }
  const recorded = await db.transaction().execute((trx) =>
    withLockedRun(trx, app.config.runs, run.id, null, async (t, locked) => {
      const phase = locked.phases.find((p) => p.id === task.phase_run_id)
      const open = await trx.selectFrom('run_tasks').select('state').where('id', '=', task.id).executeTakeFirst()
      if (!phase || open?.state !== 'open' || !['running', 'awaiting_tool_approval', 'awaiting_input'].includes(phase.status)) return false
      row.position = (await callsOfTask(trx, task.id)).length
      await markRouteCalls(trx, run.id)
      await trx.insertInto('tool_calls').values(row).execute()
      await recordToolCallEvent(trx, row, locked.streamId, 'tool_call.created', t.traceparent)
      if (approval || question) {
        const status = waitingStatus(await callsOfTask(trx, task.id))
        // Also when the phase already waits so: persistRun arms the new call's clock (src/waits/clock.ts).
        if (status) {
          const before = snapshotOf(locked)
          phase.status = status
          locked.status = 'waiting'
          await persistRun(t, locked, before.status === 'running' ? 'tool_wait' : 'tool_resume', before)
        }
      }
      return true
    }),
  )
  if (!recorded) throw new AppError('task-closed', 'The task was closed (answered, canceled or superseded); its tools can no longer be called.')
  if (approval || question) return { waiting: true, call: row }
  const scope: ToolScope = { workspaceId: task.workspace_id, run, agentId: agent.id, traceparent: task.traceparent }
  return { waiting: false, call: await finishCall(app, scope, row, await performTool(app, scope, tool, tool.name, input)) }
}

/** The job of an approved call of the task tool route: makes it, once. */
export const callToolJob: JobHandler<JobPayloads[typeof CALL_TOOL_JOB]> = async ({ callId }, { app, signal }) => {
  const { db } = app.database
  const row = await db.selectFrom('tool_calls').selectAll().where('id', '=', callId).executeTakeFirst()
  // Neither a question nor a remote A2A agent's authorization is a tool to make (src/a2a/remote-waits.ts).
  if (!row || row.status !== 'running' || row.name === ASK_OPERATOR || row.name === A2A_AUTHORIZE) return
  const task = await findTask(db, row.task_id)
  const [run, agent] = task ? await Promise.all([findRun(db, task.workspace_id, task.run_id), findAgent(db, task.workspace_id, task.agent_id)]) : []
  const scope: ToolScope | null = task && run && agent ? { workspaceId: task.workspace_id, run, agentId: agent.id, traceparent: task.traceparent } : null
  if (!task || !run || !agent || !scope) return
  const tools = await resolveTools(mcpDeps(app), task.workspace_id, agent.capabilities.tools, signal)
  await dispatchCall(app, scope, row, tools.tools.find((t) => t.name === row.name), signal)
}
