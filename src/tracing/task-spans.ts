// The spans of a settled task: its invoke_agent (the id stored on the task when it was made, under the run's
// invoke_workflow) and an execute_tool per tool call it made (ids derived from the calls). Read in the transaction
// that settled it; only when traces are on.
import { SpanKind } from '@opentelemetry/api'
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { parseTraceparent } from '../http/trace.js'
import type { InsightEvent } from '../insights/events.js'
import { derivedSpanId } from './ids.js'
import type { RecordSpan } from './index.js'

/** gen_ai.provider.name per providerType. */
export const PROVIDER_NAMES: Record<string, string> = {
  claude: 'anthropic',
  mistral: 'mistral_ai',
  elevenlabs: 'elevenlabs',
  copilot_studio: 'microsoft.copilot_studio',
  cursor: 'cursor',
  custom_webhook: 'tandem.custom_webhook',
  custom_token_only: 'tandem.custom_token_only',
}

export async function spansOfTask(event: Extract<InsightEvent, { type: 'task_settled' }>, record: RecordSpan, db: Kysely<Database>, captureContent: boolean): Promise<void> {
  const { phase } = event
  const task = await db
    .selectFrom('run_tasks')
    .select(['id', 'traceparent', 'created_at', 'closed_at', 'usage', 'agent_id'])
    // Through the run's tasks (run_tasks_run): no index leads with the phase run.
    .where('run_id', '=', event.run.id)
    .where('phase_run_id', '=', phase.id)
    .orderBy('attempt', 'desc')
    .limit(1)
    .executeTakeFirst()
  const own = parseTraceparent(task?.traceparent ?? undefined)
  if (!task || !own) return
  const agent = await db.selectFrom('agents').select(['name', 'provider_type', 'config']).where('id', '=', task.agent_id).executeTakeFirst()
  const config = typeof agent?.config === 'string' ? (JSON.parse(agent.config) as Record<string, unknown>) : ((agent?.config ?? {}) as Record<string, unknown>)
  const usage = task.usage ? (JSON.parse(task.usage) as { inputTokens: number; outputTokens: number }) : null
  const inProcess = agent?.provider_type === 'claude' || (agent?.provider_type === 'mistral' && !config.agentId)
  const end = Date.parse(task.closed_at ?? new Date().toISOString())
  record({
    name: `invoke_agent ${agent?.name ?? task.agent_id}`,
    kind: inProcess ? SpanKind.INTERNAL : SpanKind.CLIENT,
    traceId: own.traceId,
    spanId: own.spanId,
    flags: own.flags,
    parentSpanId: derivedSpanId('invoke_workflow', event.run.id),
    start: Date.parse(task.created_at),
    end,
    attributes: {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.id': task.agent_id,
      ...(agent ? { 'gen_ai.agent.name': agent.name, 'gen_ai.provider.name': PROVIDER_NAMES[agent.provider_type] ?? agent.provider_type } : {}),
      ...(typeof config.model === 'string' ? { 'gen_ai.request.model': config.model } : {}),
      ...(usage ? { 'gen_ai.usage.input_tokens': usage.inputTokens, 'gen_ai.usage.output_tokens': usage.outputTokens } : {}),
      ...(captureContent && phase.output && typeof (phase.output as { text?: unknown }).text === 'string' ? { 'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: (phase.output as { text: string }).text }] }]) } : {}),
      'tandem.run.id': event.run.id,
      'tandem.phase_run.id': phase.id,
      'tandem.task.id': task.id,
    },
    error: phase.status === 'failed' ? (phase.error?.type.split(':').pop() ?? 'failed') : null,
  })
  const calls = await db
    .selectFrom('tool_calls')
    .select(['id', 'name', 'status', 'input', 'output', 'started_at', 'finished_at'])
    .where('task_id', '=', task.id)
    .orderBy('step')
    .orderBy('position')
    .limit(1000)
    .execute()
  for (const call of calls) {
    record({
      name: `execute_tool ${call.name}`,
      kind: SpanKind.INTERNAL,
      traceId: own.traceId,
      spanId: derivedSpanId('execute_tool', call.id),
      flags: own.flags,
      parentSpanId: own.spanId,
      start: Date.parse(call.started_at),
      end: Date.parse(call.finished_at ?? new Date(end).toISOString()),
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': call.name,
        'gen_ai.tool.call.id': call.id,
        'gen_ai.tool.type': call.name.startsWith('tandem.') ? 'function' : 'extension',
        ...(captureContent ? { 'gen_ai.tool.call.arguments': call.input, ...(call.output !== null ? { 'gen_ai.tool.call.result': call.output } : {}) } : {}),
        'tandem.run.id': event.run.id,
        'tandem.phase_run.id': phase.id,
      },
      error: call.status === 'failed' ? 'tool_error' : null,
    })
  }
}
