// The run engine's side of the model tool loop (src/runs/adapters/tool-loop.ts): resolving the agent's tools for a delivery,
// recording every call as a row (with `tool_call.*` events) in the engine's transactions, making the calls, and
// stopping the phase while a call waits for an operator (docs/tools-and-approvals.md).
//
// No call is made twice (src/runs/tool-calls/exec.ts): a call is marked dispatched before it is made, and a dispatched
// call found unfinished after a restart is recorded as failed ("interrupted"), never made again.
import type { FastifyInstance } from 'fastify'
import type { Agent } from '../../agents/schemas.js'
import { newId, now } from '../../ids.js'
import { removeJob } from '../../jobs/index.js'
import { MAX_TOOL_INPUT_BYTES } from '../../tools/limits.js'
import { resolveTools } from '../../tools/resolve.js'
import type { CallResult, HostAnswer, LoopState, RequestedCall, ToolLoopHost } from '../adapters/tool-loop.js'
import { persistRun } from '../machine/machine.js'
import { withLockedRun } from '../machine/locked.js'
import { snapshotOf } from '../machine/transitions.js'
import { deliveryKey, timeoutKey, type DeliveryJob } from '../machine/jobs.js'
import { releaseTaskLease, type TaskRow } from '../store.js'
import { dispatchCall, finishCall, mcpDeps, performTool, type ToolScope } from './exec.js'
import type { Run } from '../schemas.js'
import type { ToolCallApproval, ToolCallRow, StoredLoop } from './store.js'
import { callsOfTask, recordToolCallEvent } from './store.js'
import { ASK_OPERATOR, awaitsOperator, waitingStatus } from '../../waits/kinds.js'

/** The providers whose adapters run Tandem's tool loop. */
export const TOOL_LOOP_PROVIDERS: ReadonlySet<string> = new Set(['claude', 'mistral'])

interface HostInput {
  task: TaskRow
  run: Run
  agent: Agent
  job: DeliveryJob
}

function resultOf(row: ToolCallRow, vendorName: string): CallResult {
  if (row.status === 'succeeded') return { toolCallId: row.model_call_id, vendorName, ok: true, text: row.output ?? '' }
  return { toolCallId: row.model_call_id, vendorName, ok: false, text: row.error ?? 'The call failed.' }
}

/** Records the phase's warnings (entries naming no tool), when they changed, on the locked run. */
export async function noteWarnings(app: FastifyInstance, input: Pick<HostInput, 'task' | 'run'>, warnings: string[]): Promise<void> {
  if (warnings.length === 0) return
  await app.database.db.transaction().execute((trx) =>
    withLockedRun(trx, app.config.runs, input.run.id, null, async (t, run) => {
      const phase = run.phases.find((p) => p.id === input.task.phase_run_id)
      if (!phase || phase.status !== 'running') return
      const merged = [...new Set([...(phase.warnings ?? []), ...warnings])]
      if (merged.length === (phase.warnings ?? []).length) return
      const before = snapshotOf(run)
      phase.warnings = merged
      await persistRun(t, run, 'tool_wait', before)
    }),
  )
}

/** The host of one delivery of a task whose agent has tools, or null when it has none. */
export async function prepareToolLoop(app: FastifyInstance, input: HostInput, signal: AbortSignal): Promise<ToolLoopHost | null> {
  const entries = input.agent.capabilities.tools
  if (entries.length === 0 || !TOOL_LOOP_PROVIDERS.has(input.agent.providerType)) return null
  const { db, dialect } = app.database
  const resolved = await resolveTools(mcpDeps(app), input.task.workspace_id, entries, signal)
  await noteWarnings(app, input, resolved.warnings)
  const byName = new Map(resolved.tools.map((tool) => [tool.name, tool]))
  const { task, run } = input
  const traceparent = task.traceparent

  const scope: ToolScope = { workspaceId: task.workspace_id, run, agentId: input.agent.id, traceparent }

  /** The results of one step's calls, making those approved since; null while one still waits for an operator. */
  async function settle(rows: ToolCallRow[], callSignal: AbortSignal): Promise<CallResult[] | null> {
    if (rows.some(awaitsOperator)) return null
    const settled: CallResult[] = []
    for (let row of rows) {
      if (row.status === 'running') row = await dispatchCall(app, scope, row, byName.get(row.name), callSignal)
      settled.push(resultOf(row, vendorNameOf(row)))
    }
    return settled
  }

  // The vendor name the model gave each call is kept in the loop state's assistant message; rows keep Tandem's.
  const vendorNames = new Map<string, string>()
  const vendorNameOf = (row: ToolCallRow) => vendorNames.get(row.model_call_id) ?? row.name

  function rememberVendorNames(state: LoopState): void {
    for (const message of state.messages) {
      if (message.role !== 'assistant' || typeof message.content === 'string') continue
      for (const part of message.content) if (part.type === 'tool-call') vendorNames.set(part.toolCallId, part.toolName)
    }
  }

  /**
   * Once a step's calls are made: if some still wait for an operator, the phase waits (on the locked run, with
   * the task's time-out and, on PostgreSQL, its lease and watchdog delivery removed); otherwise their results.
   */
  async function waitOrSettle(step: number, callSignal: AbortSignal): Promise<HostAnswer> {
    const waiting = await db.transaction().execute((trx) =>
      withLockedRun(trx, app.config.runs, run.id, null, async (t, locked) => {
        const phase = locked.phases.find((p) => p.id === task.phase_run_id)
        if (!phase || phase.status !== 'running') {
          // Nothing to do (the phase waits or ended): on PostgreSQL this delivery's lease and watchdog go too. No
          // resume is pending while the phase does not run, so the delivery key holds only the watchdog.
          if (dialect === 'postgres') {
            await releaseTaskLease(trx, task.id)
            await removeJob(trx, deliveryKey(task.id))
          }
          return 'gone' as const
        }
        const status = waitingStatus((await callsOfTask(trx, task.id)).filter((r) => r.step === step))
        if (!status) return null
        const before = snapshotOf(locked)
        phase.status = status
        locked.status = 'waiting'
        await removeJob(trx, timeoutKey(task.id))
        if (dialect === 'postgres') {
          await releaseTaskLease(trx, task.id)
          await removeJob(trx, deliveryKey(task.id))
        }
        await persistRun(t, locked, 'tool_wait', before)
        return status
      }),
    )
    if (waiting !== null) return { waiting: true }
    const rows = (await callsOfTask(db, task.id)).filter((r) => r.step === step)
    const results = await settle(rows, callSignal)
    return results ? { results } : waitOrSettle(step, callSignal)
  }

  function plan(call: RequestedCall, step: number, position: number, state: StoredLoop | null): ToolCallRow {
    const at = now()
    const base = {
      id: newId(), workspace_id: task.workspace_id, run_id: run.id, phase_run_id: task.phase_run_id, task_id: task.id, attempt: Number(task.attempt),
      step, position, model_call_id: call.toolCallId, name: call.tool?.name ?? call.vendorName, input: '{}', output: null, error: null,
      approval: null, loop_state: state === null ? null : JSON.stringify(state), dispatched_at: null, started_at: at, finished_at: null,
    }
    const fail = (error: string): ToolCallRow => ({ ...base, input: JSON.stringify(call.input ?? null), status: 'failed', error, finished_at: at })
    if (!call.tool) {
      const offered = resolved.tools.map((t) => t.name).join(', ') || 'none'
      return fail(`There is no tool named ${call.vendorName}; the tools offered are: ${offered}.`)
    }
    if (call.input === null || typeof call.input !== 'object' || Array.isArray(call.input)) return fail('The tool input must be a JSON object.')
    const json = JSON.stringify(call.input)
    const bytes = Buffer.byteLength(json)
    if (bytes > MAX_TOOL_INPUT_BYTES) return { ...fail(`The tool input is ${bytes} bytes of JSON; at most ${MAX_TOOL_INPUT_BYTES} are accepted.`), input: JSON.stringify({ truncated: true, bytes }) }
    const row = { ...base, input: json }
    if (call.tool.source.kind === 'mcp' && call.tool.source.approval === 'always') {
      const approval: ToolCallApproval = { required: true, decision: null, note: null, principalId: null, handle: null, at: null }
      return { ...row, status: 'awaiting_approval', approval: JSON.stringify(approval) }
    }
    if (call.tool.name === ASK_OPERATOR) {
      const question = (call.input as Record<string, unknown>).question
      if (typeof question !== 'string' || question.trim() === '') return fail('`question` must be a non-empty string.')
      return { ...row, status: 'running' }
    }
    return { ...row, status: 'running', dispatched_at: at }
  }

  return {
    tools: resolved.tools,
    maxSteps: app.config.toolSteps,
    noteWarnings: (warnings) => noteWarnings(app, input, warnings),

    async resume(callSignal) {
      const rows = await callsOfTask(db, task.id)
      if (rows.length === 0) return null
      const step = Math.max(...rows.map((r) => Number(r.step)))
      const last = rows.filter((r) => Number(r.step) === step)
      const stored = last.find((r) => r.loop_state !== null)
      if (!stored) throw new Error(`the tool calls of task ${task.id} hold no loop state`)
      const { job: _job, ...state } = JSON.parse(stored.loop_state as string) as StoredLoop
      rememberVendorNames(state)
      const answer = await waitOrSettle(step, callSignal)
      return { state, ...answer }
    },

    async step(state, calls, callSignal) {
      for (const call of calls) vendorNames.set(call.toolCallId, call.vendorName)
      const stored: StoredLoop = { ...state, job: { taskId: task.id, token: input.job.token, dispatch: 1 } }
      const rows = calls.map((call, position) => plan(call, state.step, position, position === 0 ? stored : null))
      const recorded = await db.transaction().execute((trx) =>
        withLockedRun(trx, app.config.runs, run.id, null, async (t, locked) => {
          const phase = locked.phases.find((p) => p.id === task.phase_run_id)
          const open = await trx.selectFrom('run_tasks').select('state').where('id', '=', task.id).executeTakeFirst()
          if (!phase || phase.status !== 'running' || open?.state !== 'open') return false
          await trx.insertInto('tool_calls').values(rows).execute()
          for (const row of rows) await recordToolCallEvent(trx, row, locked.streamId, 'tool_call.created', t.traceparent)
          return true
        }),
      )
      // The phase moved on meanwhile (a cancel): nothing more to do.
      if (!recorded) return { waiting: true }
      for (const row of rows) {
        if (row.status === 'running' && row.dispatched_at !== null) {
          await finishCall(app, scope, row, await performTool(app, scope, byName.get(row.name), row.name, JSON.parse(row.input), callSignal))
        }
      }
      return waitOrSettle(state.step, callSignal)
    },
  }
}
