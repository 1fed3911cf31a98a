// One model call through the Vercel AI SDK for the chat-style adapters (Claude, Mistral chat): no silent
// retries (the engine owns retries and back-off), the context's fetch and signal, and the SDK's errors mapped
// onto delivery outcomes. A streaming agent (the context has `onDelta`) is answered through `streamText`, each
// text delta handed on as it arrives; either way the vendor's reported usage comes back with the answer.
import type { LanguageModel, LanguageModelUsage, streamText } from 'ai'
import { aiSdk, aiSdkIfLoaded } from './ai-sdk-modules.js'
import type { AdapterContext, DeliveryOutcome, Usage } from './adapter.js'
import { errorOutcome, isEgressDenied, malformed, redact, statusOutcome } from './outcome.js'
import type { Prompt } from './prompt.js'

function headerOf(headers: Record<string, string> | undefined, name: string): string | null {
  if (!headers) return null
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name)
  return key ? (headers[key] ?? null) : null
}

/** The SDK's usage as Tandem records it: null when the vendor reported no token counts at all. */
export function usageOf(usage: LanguageModelUsage | undefined): Usage | null {
  if (!usage || (usage.inputTokens === undefined && usage.outputTokens === undefined)) return null
  return { inputTokens: usage.inputTokens ?? 0, outputTokens: usage.outputTokens ?? 0 }
}

export async function answerWithModel(
  vendor: string,
  model: LanguageModel,
  prompt: Prompt,
  context: AdapterContext,
  options: { maxOutputTokens?: number; secret: string | null },
): Promise<DeliveryOutcome> {
  const call = {
    model,
    ...(prompt.system ? { system: prompt.system } : {}),
    prompt: prompt.user,
    maxRetries: 0,
    abortSignal: context.signal,
    ...(options.maxOutputTokens ? { maxOutputTokens: options.maxOutputTokens } : {}),
    ...(context.traceparent ? { headers: { traceparent: context.traceparent } } : {}),
  }
  if (context.onDelta) return streamWithModel(vendor, call, context, context.onDelta, options.secret)
  const start = Date.now()
  try {
    const { generateText } = await aiSdk()
    const result = await generateText(call)
    const usage = usageOf(result.totalUsage ?? result.usage)
    modelStepEnded(context, model, start, usage, result.finishReason, null)
    const text = result.text.trim()
    if (!text) return malformed(vendor, 'answered with no text')
    return { kind: 'answered', output: { text: result.text }, usage }
  } catch (thrown) {
    const outcome = modelErrorOutcome(vendor, thrown, context, options.secret)
    modelStepEnded(context, model, start, null, null, outcome)
    return outcome
  }
}

/** Tells the context's onModelStep (the `chat` span) of a model call that ended; `failed`: its outcome, if it failed. */
export function modelStepEnded(context: AdapterContext, model: LanguageModel, start: number, usage: Usage | null, finishReason: string | null, failed: DeliveryOutcome | null): void {
  if (!context.onModelStep) return
  const error = failed === null ? null : failed.kind === 'failed' ? failed.code : failed.kind
  context.onModelStep({ model: typeof model === 'string' ? model : model.modelId, start, end: Date.now(), usage, finishReason, error })
}

/** streamText: each text delta to `onDelta`; an error part (status, network, a cut stream) ends it as generateText's would. */
async function streamWithModel(
  vendor: string,
  call: Parameters<typeof streamText>[0],
  context: AdapterContext,
  onDelta: (text: string) => void,
  secret: string | null,
): Promise<DeliveryOutcome> {
  let text = ''
  let failure: unknown
  let usage: LanguageModelUsage | undefined
  let finishReason: string | null = null
  const start = Date.now()
  try {
    const { streamText } = await aiSdk()
    const result = streamText({ ...call, onError: () => {} })
    for await (const part of result.fullStream) {
      if (part.type === 'text-delta') {
        text += part.text
        onDelta(part.text)
      } else if (part.type === 'error') {
        failure = part.error
        break
      } else if (part.type === 'finish') {
        usage = part.totalUsage
        finishReason = part.finishReason
      } else if (part.type === 'abort') {
        failure = context.signal.reason ?? new Error('aborted')
        break
      }
    }
  } catch (thrown) {
    failure = thrown
  }
  if (failure !== undefined) {
    // Cut after the answer had begun (a dropped connection, a stream that never ends; the SDK reports a stream
    // broken after a 2xx as an APICallError with that status): a transient failure.
    const status = aiSdkIfLoaded()?.APICallError.isInstance(failure) ? (failure as { statusCode?: number }).statusCode : undefined
    const afterSuccess = status !== undefined && status >= 200 && status < 300
    const outcome = afterSuccess || (text !== '' && status === undefined) ? errorOutcome(vendor, failure, context) : modelErrorOutcome(vendor, failure, context, secret)
    modelStepEnded(context, call.model, start, null, null, outcome)
    return outcome
  }
  modelStepEnded(context, call.model, start, usageOf(usage), finishReason, null)
  if (!text.trim()) return malformed(vendor, 'answered with no text')
  return { kind: 'answered', output: { text }, usage: usageOf(usage) }
}

/** The SDK's errors as delivery outcomes: statuses as the vendors' (outcome.ts), network and time-out as retries. */
export function modelErrorOutcome(vendor: string, thrown: unknown, context: AdapterContext, secret: string | null): DeliveryOutcome {
  // The SDK threw this, so it is loaded; without it nothing here is one of its errors.
  const sdk = aiSdkIfLoaded()
  const APICallError = sdk?.APICallError
  const error = sdk?.RetryError.isInstance(thrown) ? thrown.lastError : thrown
  if (isEgressDenied(error)) return errorOutcome(vendor, error, context)
  if (APICallError?.isInstance(error) && error.statusCode !== undefined) {
    if (error.statusCode >= 200 && error.statusCode < 300) return malformed(vendor, 'answered with a malformed response')
    return statusOutcome(vendor, error.statusCode, headerOf(error.responseHeaders, 'retry-after'))
  }
  if (APICallError?.isInstance(error) || context.signal.aborted || error instanceof TypeError || isAbort(error)) {
    return errorOutcome(vendor, error, context)
  }
  // Anything else the SDK throws (an unparseable body, a schema mismatch) is an answer we cannot use.
  const name = error instanceof Error ? error.name : 'error'
  return malformed(vendor, redact(`answered with a response that could not be read (${name})`, secret))
}

function isAbort(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError')
}
