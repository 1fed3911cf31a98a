// One model call through the Vercel AI SDK for the chat-style adapters (Claude, Mistral chat): no silent
// retries (the engine owns retries and back-off), the context's fetch and signal, and the SDK's errors mapped
// onto delivery outcomes.
import { APICallError } from '@ai-sdk/provider'
import { generateText, RetryError, type LanguageModel } from 'ai'
import type { AdapterContext, DeliveryOutcome } from './adapter.js'
import { errorOutcome, isEgressDenied, malformed, redact, statusOutcome } from './outcome.js'
import type { Prompt } from './prompt.js'

function headerOf(headers: Record<string, string> | undefined, name: string): string | null {
  if (!headers) return null
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name)
  return key ? (headers[key] ?? null) : null
}

export async function answerWithModel(
  vendor: string,
  model: LanguageModel,
  prompt: Prompt,
  context: AdapterContext,
  options: { maxOutputTokens?: number; secret: string | null },
): Promise<DeliveryOutcome> {
  try {
    const result = await generateText({
      model,
      ...(prompt.system ? { system: prompt.system } : {}),
      prompt: prompt.user,
      maxRetries: 0,
      abortSignal: context.signal,
      ...(options.maxOutputTokens ? { maxOutputTokens: options.maxOutputTokens } : {}),
      ...(context.traceparent ? { headers: { traceparent: context.traceparent } } : {}),
    })
    const text = result.text.trim()
    if (!text) return malformed(vendor, 'answered with no text')
    return { kind: 'answered', output: { text: result.text } }
  } catch (thrown) {
    const error = RetryError.isInstance(thrown) ? thrown.lastError : thrown
    if (isEgressDenied(error)) return errorOutcome(vendor, error, context)
    if (APICallError.isInstance(error) && error.statusCode !== undefined) {
      if (error.statusCode >= 200 && error.statusCode < 300) return malformed(vendor, 'answered with a malformed response')
      return statusOutcome(vendor, error.statusCode, headerOf(error.responseHeaders, 'retry-after'))
    }
    if (APICallError.isInstance(error) || context.signal.aborted || error instanceof TypeError || isAbort(error)) {
      return errorOutcome(vendor, error, context)
    }
    // Anything else the SDK throws (an unparseable body, a schema mismatch) is an answer we cannot use.
    const name = error instanceof Error ? error.name : 'error'
    return malformed(vendor, redact(`answered with a response that could not be read (${name})`, options.secret))
  }
}

function isAbort(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError')
}
