// The run engine's side of the model tool loop (src/tools/loop.ts): resolving the agent's tools for a delivery,
// recording every call as a row (with `tool_call.*` events) in the engine's transactions, making the calls, and
// stopping the phase while a call waits for an operator (docs/tools-and-approvals.md).
//
// No call is made twice: a call is marked dispatched (in its own committed write) before it is made, and a
// dispatched call found unfinished after a restart is recorded as failed ("interrupted"), never made again.
import type { FastifyInstance } from 'fastify'
import type { Agent } from '../agents/schemas.js'
import { newId, now } from '../ids.js'
import { removeJob } from '../jobs/index.js'
import { insertMessage, listLatestMessages } from '../chat/store.js'
import type { McpDeps } from '../mcp/client.js'
import { callMcpTool, cutOutput, MAX_TOOL_INPUT_BYTES } from '../tools/mcp-call.js'
import type { ToolDefinition } from '../tools/definitions.js'
import { resolveTools } from '../tools/resolve.js'
import type { CallResult, HostAnswer, LoopState, RequestedCall, ToolLoopHost } from '../tools/loop.js'
import { contentOf, persistRun } from './machine.js'
import { withLockedRun } from './locked.js'
import { snapshotOf } from './transitions.js'
import { deliveryKey, timeoutKey, type DeliveryJob } from './jobs.js'
import { releaseTaskLease, type TaskRow } from './store.js'
import { outboundClient } from './outbound.js'
import type { Run } from './schemas.js'
import type { ToolCallApproval, ToolCallRow, StoredLoop } from './tool-calls.js'
import { ASK_OPERATOR, awaitsOperator, callsOfTask, recordToolCallEvent, updateCall, waitingStatus } from './tool-calls.js'

/** The providers whose adapters run Tandem's tool loop. */
export const TOOL_LOOP_PROVIDERS: ReadonlySet<string> = new Set(['claude', 'mistral'])

const INTERRUPTED = 'Tandem stopped while this call was in flight (a restart); it was not made again, and may or may not have taken effect.'

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
async function noteWarnings(app: FastifyInstance, input: HostInput, warnings: string[]): Promise<void> {
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
  const deps: McpDeps = { db, guard: outboundClient(app), timeoutMs: app.config.toolTimeoutMs }
  const resolved = await resolveTools(deps, input.task.workspace_id, entries, signal)
  await noteWarnings(app, input, resolved.warnings)
  const byName = new Map(resolved.tools.map((tool) => [tool.name, tool]))
  const { task, run } = input
  const traceparent = task.traceparent

  async function finish(row: ToolCallRow, outcome: { ok: true; output: string } | { ok: false; error: string }): Promise<ToolCallRow> {
    return db.transaction().execute(async (trx) => {
      const updated = await updateCall(trx, row.id, outcome.ok ? { status: 'succeeded', output: outcome.output, finished_at: now() } : { status: 'failed', error: outcome.error, finished_at: now() })
      await recordToolCallEvent(trx, updated, run.streamId, 'tool_call.updated', traceparent)
      return updated
    })
  }

  async function perform(tool: ToolDefinition | undefined, name: string, inputValue: unknown, callSignal: AbortSignal): Promise<{ ok: true; output: string } | { ok: false; error: string }> {
    if (!tool) return { ok: false, error: `The tool ${name} is no longer offered to this agent.` }
    try {
      if (tool.source.kind === 'mcp') {
        const { source } = tool
        const outcome = await callMcpTool(deps, { workspaceId: task.workspace_id, name: source.serverName, url: source.url, credentialId: source.credentialId }, source.tool, inputValue, { signal: callSignal })
        return outcome.ok ? { ok: true, output: outcome.output } : outcome
      }
      const args = inputValue as Record<string, unknown>
      if (tool.name === 'tandem.read_messages') {
        const limit = args.limit === undefined ? 20 : args.limit
        if (!Number.isInteger(limit) || (limit as number) < 1 || (limit as number) > 50) return { ok: false, error: '`limit` must be an integer from 1 to 50.' }
        const messages = await listLatestMessages(db, task.workspace_id, run.streamId, limit as number)
        const text = messages.map((m) => `[${m.createdAt}] ${m.authorType} ${m.authorId}: ${m.text}`).join('\n')
        return { ok: true, output: cutOutput(text || '(no messages)').output }
      }
      if (tool.name === 'tandem.post_message') {
        const text = args.text
        if (typeof text !== 'string' || text.trim() === '' || text.length > 20000) return { ok: false, error: '`text` must be a non-empty string of at most 20,000 characters.' }
        const message = await db.transaction().execute((trx) =>
          insertMessage(trx, { workspaceId: task.workspace_id, streamId: run.streamId, authorId: input.agent.id, authorType: 'agent', content: contentOf(text), traceparent, origin: { runId: run.id, cycleId: run.cycleId, depth: run.depth } }),
        )
        return { ok: true, output: `Posted message ${message.id}.` }
      }
      return { ok: false, error: `Tandem has no tool ${tool.name}.` }
    } catch (error) {
      return { ok: false, error: `The tool ${name} failed: ${error instanceof Error ? error.message : String(error)}` }
    }
  }

  /** Makes a call not yet dispatched: marks it first (a committed write), so a restart never makes it again. */
  async function dispatch(row: ToolCallRow, callSignal: AbortSignal): Promise<ToolCallRow> {
    const marked = await db.updateTable('tool_calls').set({ dispatched_at: now() }).where('id', '=', row.id).where('dispatched_at', 'is', null).where('status', '=', 'running').executeTakeFirst()
    if (Number(marked.numUpdatedRows) === 0) return finish(row, { ok: false, error: INTERRUPTED })
    return finish(row, await perform(byName.get(row.name), row.name, JSON.parse(row.input), callSignal))
  }

  /** The results of one step's calls, making those approved since; null while one still waits for an operator. */
  async function settle(rows: ToolCallRow[], callSignal: AbortSignal): Promise<CallResult[] | null> {
    if (rows.some(awaitsOperator)) return null
    const settled: CallResult[] = []
    for (let row of rows) {
      if (row.status === 'running') row = row.dispatched_at === null ? await dispatch(row, callSignal) : await finish(row, { ok: false, error: INTERRUPTED })
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
        if (!phase || phase.status !== 'running') return 'gone' as const
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
          await finish(row, await perform(byName.get(row.name), row.name, JSON.parse(row.input), callSignal))
        }
      }
      return waitOrSettle(state.step, callSignal)
    },
  }
}
