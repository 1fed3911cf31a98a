// A local Mistral API: chat completions (`POST /v1/chat/completions`) and the Agents API
// (`POST /v1/agents/completions`), Bearer key checked (apiKey null: a keyless gateway), each request answered with the next scripted step.
import type { ModelStep } from './anthropic.js'
import { failureReply, script, startHttpFake, type HttpFake } from './http.js'
import { sse, streamEvents } from './sse-script.js'

export async function startMistralFake(apiKey: string | null): Promise<HttpFake & { base: string; steps: ReturnType<typeof script<ModelStep>> }> {
  const steps = script<ModelStep>({ text: 'It is a question.' })
  const fake = await startHttpFake((exchange) => {
    if (exchange.method !== 'POST' || !['/v1/chat/completions', '/v1/agents/completions'].includes(exchange.path)) return { status: 404, body: { message: 'no route' } }
    if (apiKey !== null && exchange.headers.authorization !== `Bearer ${apiKey}`) return { status: 401, body: { message: 'Unauthorized', request_id: 'r1' } }
    const step = steps.take()
    const failure = failureReply(step)
    if (failure) return failure
    const usage = step.usage ?? { input: 10, output: 10 }
    const model = exchange.body.model ?? 'agent-model'
    if (exchange.body.stream === true) {
      // Chat-completion chunks, then [DONE] (docs.mistral.ai, "stream": true).
      const chunk = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
        sse(null, { id: 'cmpl-fake', object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model, choices: [{ index: 0, delta, finish_reason: null, ...extra }] })
      const deltas = step.deltas ?? (step.text === undefined ? [] : [step.text])
      return {
        delayMs: step.delayMs ?? 0,
        stream: (res) =>
          streamEvents(res, { ...step, deltas }, {
            head: [chunk({ role: 'assistant', content: '' })],
            delta: (text) => chunk({ content: text }),
            tail: [
              sse(null, { id: 'cmpl-fake', object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model, choices: [{ index: 0, delta: { content: '' }, finish_reason: 'stop' }], usage: { prompt_tokens: usage.input, total_tokens: usage.input + usage.output, completion_tokens: usage.output } }),
              sse(null, '[DONE]'),
            ],
          }),
      }
    }
    return {
      delayMs: step.delayMs ?? 0,
      body: {
        id: 'cmpl-fake',
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: exchange.body.model ?? 'agent-model',
        choices: [{ index: 0, message: { role: 'assistant', content: step.text ?? '', tool_calls: null }, finish_reason: 'stop' }],
        usage: { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output },
      },
    }
  })
  return { ...fake, base: `${fake.url}/v1`, steps }
}
