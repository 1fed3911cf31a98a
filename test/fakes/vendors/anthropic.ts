// A local Anthropic Messages API (`POST /v1/messages`): checks `x-api-key` (apiKey null: a keyless gateway that
// takes any request), answers each request with the next scripted step.
import { failureReply, script, startHttpFake, type HttpFake } from './http.js'
import { sse, streamEvents, type StreamStep } from './sse-script.js'

export interface ModelStep extends StreamStep {
  /** Tokens reported (default 10 in, 10 out). */
  usage?: { input: number; output: number }
  text?: string
  status?: number
  retryAfter?: string
  raw?: string
  delayMs?: number
}

export async function startAnthropicFake(apiKey: string | null): Promise<HttpFake & { base: string; steps: ReturnType<typeof script<ModelStep>> }> {
  const steps = script<ModelStep>({ text: 'It is a bug.' })
  const fake = await startHttpFake((exchange) => {
    if (exchange.method !== 'POST' || exchange.path !== '/v1/messages') return { status: 404, body: { type: 'error', error: { type: 'not_found_error', message: 'no route' } } }
    if (apiKey !== null && exchange.headers['x-api-key'] !== apiKey) return { status: 401, body: { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } } }
    const step = steps.take()
    const failure = failureReply(step)
    if (failure) return failure
    const usage = step.usage ?? { input: 10, output: 10 }
    if (exchange.body.stream === true) {
      // The Messages API's streaming events (docs.anthropic.com "Streaming Messages").
      const deltas = step.deltas ?? (step.text === undefined ? [] : [step.text])
      return {
        delayMs: step.delayMs ?? 0,
        stream: (res) =>
          streamEvents(res, { ...step, deltas }, {
            head: [
              sse('message_start', { type: 'message_start', message: { id: 'msg_fake', type: 'message', role: 'assistant', content: [], model: exchange.body.model, stop_reason: null, stop_sequence: null, usage: { input_tokens: usage.input, output_tokens: 1 } } }),
              sse('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
              sse('ping', { type: 'ping' }),
            ],
            delta: (text) => sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }),
            tail: [
              sse('content_block_stop', { type: 'content_block_stop', index: 0 }),
              sse('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: usage.output } }),
              sse('message_stop', { type: 'message_stop' }),
            ],
          }),
      }
    }
    return {
      delayMs: step.delayMs ?? 0,
      body: {
        id: 'msg_fake',
        type: 'message',
        role: 'assistant',
        model: exchange.body.model,
        content: step.text === undefined ? [] : [{ type: 'text', text: step.text }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: usage.input, output_tokens: usage.output },
      },
    }
  })
  return { ...fake, base: `${fake.url}/v1`, steps }
}
