// The model tool loop for the chat-style adapters (claude, mistral chat), through the AI SDK: the tools are given
// to the model without `execute`, and each model step is one `streamText` call, so every step's tool calls can be
// recorded before they are made and the loop can stop (an approval, a question) and resume from what was stored.
// Text is forwarded as it streams (context.onDelta). At most `host.maxSteps` model steps (TANDEM_TOOL_STEPS): a
// model still asking for tools at the last one ends the phase with a problem that says so. What the tools do,
// where calls are recorded and how the phase waits belongs to the host (src/runs/tool-calls/host.ts).
import type { LanguageModel, ModelMessage, ToolSet } from 'ai'
import { aiSdk } from './ai-sdk-modules.js'
import type { AdapterContext, DeliveryOutcome, Usage } from './adapter.js'
import { modelErrorOutcome, modelStepEnded, usageOf } from './ai-sdk.js'
import { malformed } from './outcome.js'
import type { Prompt } from './prompt.js'
import type { ToolDefinition } from '../../tools/definitions.js'
import { vendorToolNames } from '../../tools/vendor-names.js'

/**
 * What the loop has done so far: the messages (the prompt first), the tokens used, the model steps taken, and the
 * text the model wrote along the way (every step's, so the answer is what was streamed).
 */
export interface LoopState {
  messages: ModelMessage[]
  text: string
  usage: Usage
  step: number
}

/** A call the model asked for: `tool` is undefined when the name is not one Tandem offered. */
export interface RequestedCall {
  toolCallId: string
  vendorName: string
  tool: ToolDefinition | undefined
  input: unknown
}

/** A settled call, as the model reads it. */
export interface CallResult {
  toolCallId: string
  vendorName: string
  ok: boolean
  text: string
}

export type HostAnswer = { results: CallResult[] } | { waiting: true }

export interface ToolLoopHost {
  tools: ToolDefinition[]
  maxSteps: number
  /** Warnings of the tools' names for the vendor (collisions), for the host to record. */
  noteWarnings(warnings: string[]): Promise<void>
  /** The stored loop of this task: null to start afresh; results for every call of its last step, or waiting. */
  resume(signal: AbortSignal): Promise<({ state: LoopState } & HostAnswer) | null>
  /** Records the step's calls (state holds the assistant message that asked for them) and makes what can be made now. */
  step(state: LoopState, calls: RequestedCall[], signal: AbortSignal): Promise<HostAnswer>
}

function toolMessage(results: CallResult[]): ModelMessage {
  return {
    role: 'tool',
    content: results.map((r) => ({
      type: 'tool-result' as const,
      toolCallId: r.toolCallId,
      toolName: r.vendorName,
      output: r.ok ? { type: 'text' as const, value: r.text } : { type: 'error-text' as const, value: r.text },
    })),
  }
}

const objectInput = (input: unknown) => (input !== null && typeof input === 'object' && !Array.isArray(input) ? input : {})

export async function runToolLoop(
  vendor: string,
  model: LanguageModel,
  prompt: Prompt,
  context: AdapterContext,
  options: { maxOutputTokens?: number; secret: string | null },
): Promise<DeliveryOutcome> {
  const host = context.tools
  if (!host) throw new Error('runToolLoop needs context.tools')
  const names = vendorToolNames(host.tools)
  if (names.warnings.length > 0) await host.noteWarnings(names.warnings)
  const { jsonSchema, streamText } = await aiSdk()
  const tools: ToolSet = Object.fromEntries(
    names.offered.map(({ vendorName, tool }) => [vendorName, { description: tool.description, inputSchema: jsonSchema(tool.inputSchema as never) }]),
  )
  let state: LoopState
  const resumed = await host.resume(context.signal)
  if (resumed && 'waiting' in resumed) return { kind: 'waiting' }
  if (resumed) {
    state = resumed.state
    state.messages.push(toolMessage(resumed.results))
  } else {
    state = { messages: [{ role: 'user', content: prompt.user }], text: '', usage: { inputTokens: 0, outputTokens: 0 }, step: 0 }
  }
  for (;;) {
    if (state.step >= host.maxSteps) {
      return {
        kind: 'failed',
        code: 'agent-failed',
        detail: `The model still asked for tools after ${host.maxSteps} steps (TANDEM_TOOL_STEPS); Tandem stopped its tool loop. Every call is listed at /tool-calls.`,
      }
    }
    state.step += 1
    let text = ''
    let calls: RequestedCall[]
    const start = Date.now()
    try {
      let failure: unknown
      const result = streamText({
        model,
        ...(prompt.system ? { system: prompt.system } : {}),
        messages: state.messages,
        tools,
        maxRetries: 0,
        abortSignal: context.signal,
        ...(options.maxOutputTokens ? { maxOutputTokens: options.maxOutputTokens } : {}),
        ...(context.traceparent ? { headers: { traceparent: context.traceparent } } : {}),
        onError: ({ error }) => {
          failure ??= error
        },
      })
      for await (const part of result.fullStream) {
        if (part.type === 'text-delta') {
          // Steps' texts are joined by a blank line, streamed as well.
          const piece = text === '' && state.text !== '' && part.text !== '' ? `\n\n${part.text}` : part.text
          text += part.text
          context.onDelta?.(piece)
        } else if (part.type === 'error') {
          failure ??= part.error
        }
      }
      if (failure !== undefined) throw failure
      const [toolCalls, usage, finishReason] = await Promise.all([result.toolCalls, result.usage, result.finishReason])
      state.usage.inputTokens += usage.inputTokens ?? 0
      state.usage.outputTokens += usage.outputTokens ?? 0
      modelStepEnded(context, model, start, usageOf(usage), finishReason, null)
      calls = toolCalls.map((call) => ({ toolCallId: call.toolCallId, vendorName: call.toolName, tool: names.toolOf(call.toolName), input: call.input }))
    } catch (error) {
      const outcome = modelErrorOutcome(vendor, error, context, options.secret)
      modelStepEnded(context, model, start, null, null, outcome)
      return outcome
    }
    if (text !== '') state.text = state.text === '' ? text : `${state.text}\n\n${text}`
    if (calls.length === 0) {
      if (!state.text.trim()) return malformed(vendor, 'answered with no text')
      return { kind: 'answered', output: { text: state.text }, usage: { ...state.usage } }
    }
    state.messages.push({
      role: 'assistant',
      content: [
        ...(text ? [{ type: 'text' as const, text }] : []),
        ...calls.map((call) => ({ type: 'tool-call' as const, toolCallId: call.toolCallId, toolName: call.vendorName, input: objectInput(call.input) })),
      ],
    })
    const answer = await host.step(state, calls, context.signal)
    if ('waiting' in answer) return { kind: 'waiting' }
    state.messages.push(toolMessage(answer.results))
  }
}
