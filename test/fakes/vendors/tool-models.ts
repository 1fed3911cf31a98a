// Local model APIs that stream and call tools, for the tool loop (docs/tools-and-approvals.md): the Anthropic
// Messages API (`POST /v1/messages`, `stream: true`: message_start, content_block_start/delta/stop with
// text_delta and input_json_delta, message_delta with stop_reason "tool_use" or "end_turn", message_stop) and
// Mistral chat completions (`POST /v1/chat/completions`, `stream: true`: chat.completion.chunk events with
// delta.content and delta.tool_calls, finish_reason "tool_calls" or "stop", then `data: [DONE]`), as the vendors
// document them. Each request is answered with the next scripted turn; every request body is kept.
import { failureReply, script, startHttpFake, type HttpFake } from './http.js'

export interface ToolTurn {
  /** Text the model writes (streamed in two deltas). */
  text?: string
  /** Tools the model calls, by the names it was offered (`<server>__<tool>`). `rawInput` is sent as the JSON text as is. */
  calls?: Array<{ name: string; input?: unknown; rawInput?: string }>
  status?: number
  delayMs?: number
  raw?: string
}

export type ToolModelFake = HttpFake & { base: string; turns: ReturnType<typeof script<ToolTurn>> }

const sse = (events: Array<{ event?: string; data: unknown }>) =>
  events.map((e) => `${e.event ? `event: ${e.event}\n` : ''}data: ${typeof e.data === 'string' ? e.data : JSON.stringify(e.data)}\n\n`).join('')

const halves = (text: string) => [text.slice(0, Math.ceil(text.length / 2)), text.slice(Math.ceil(text.length / 2))].filter((t) => t !== '')

let ids = 0

export function anthropicStream(turn: ToolTurn, model: string): string {
  const events: Array<{ event: string; data: unknown }> = [
    { event: 'message_start', data: { type: 'message_start', message: { id: `msg_${++ids}`, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 25, output_tokens: 1 } } } },
  ]
  let index = 0
  if (turn.text) {
    events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } } })
    for (const piece of halves(turn.text)) events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } } })
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } })
    index++
  }
  for (const call of turn.calls ?? []) {
    events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'tool_use', id: `toolu_${++ids}`, name: call.name, input: {} } } })
    const json = call.rawInput ?? JSON.stringify(call.input ?? {})
    for (const piece of halves(json)) events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } } })
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } })
    index++
  }
  const stop = turn.calls?.length ? 'tool_use' : 'end_turn'
  events.push({ event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 15 } } })
  events.push({ event: 'message_stop', data: { type: 'message_stop' } })
  return sse(events)
}

export function mistralStream(turn: ToolTurn, model: string): string {
  const base = { id: `cmpl-${++ids}`, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model }
  const events: Array<{ data: unknown }> = [{ data: { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] } }]
  for (const piece of halves(turn.text ?? '')) events.push({ data: { ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] } })
  const calls = (turn.calls ?? []).map((call, index) => ({ id: `call${String(++ids).padStart(5, '0')}`, function: { name: call.name, arguments: call.rawInput ?? JSON.stringify(call.input ?? {}) }, index }))
  const usage = { prompt_tokens: 25, completion_tokens: 15, total_tokens: 40 }
  events.push({ data: { ...base, choices: [{ index: 0, delta: { content: '', ...(calls.length ? { tool_calls: calls } : {}) }, finish_reason: calls.length ? 'tool_calls' : 'stop' }], usage } })
  events.push({ data: '[DONE]' })
  return sse(events)
}

export async function startAnthropicToolFake(): Promise<ToolModelFake> {
  const turns = script<ToolTurn>({ text: 'Done.' })
  const fake = await startHttpFake((exchange) => {
    if (exchange.method !== 'POST' || exchange.path !== '/v1/messages') return { status: 404, body: { type: 'error', error: { type: 'not_found_error', message: 'no route' } } }
    const turn = turns.take()
    const failure = failureReply(turn)
    if (failure) return failure
    return { delayMs: turn.delayMs ?? 0, headers: { 'content-type': 'text/event-stream' }, raw: anthropicStream(turn, exchange.body.model) }
  })
  return { ...fake, base: `${fake.url}/v1`, turns }
}

export async function startMistralToolFake(): Promise<ToolModelFake> {
  const turns = script<ToolTurn>({ text: 'Done.' })
  const fake = await startHttpFake((exchange) => {
    if (exchange.method !== 'POST' || exchange.path !== '/v1/chat/completions') return { status: 404, body: { message: 'no route' } }
    const turn = turns.take()
    const failure = failureReply(turn)
    if (failure) return failure
    return { delayMs: turn.delayMs ?? 0, headers: { 'content-type': 'text/event-stream' }, raw: mistralStream(turn, exchange.body.model) }
  })
  return { ...fake, base: `${fake.url}/v1`, turns }
}
