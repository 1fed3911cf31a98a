// A local Anthropic Messages API (`POST /v1/messages`): checks `x-api-key` (apiKey null: a keyless gateway that
// takes any request), answers each request with the next scripted step.
import { failureReply, script, startHttpFake, type HttpFake } from './http.js'

export interface ModelStep {
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
        usage: { input_tokens: 10, output_tokens: 10 },
      },
    }
  })
  return { ...fake, base: `${fake.url}/v1`, steps }
}
