// A stand-in for the Anthropic Messages API, for Tandem's tools walk-through (docs/tools-and-approvals.md): it
// reads no meaning into anything. Given tools, and no tool result yet, it asks for one call — the offered tool
// whose name ends with DEMO_MODEL_TOOL (default `delete_file`), with the input DEMO_MODEL_INPUT (JSON) — and
// once it has the result, it answers with a sentence quoting it. It streams (`stream: true`) the way the API
// does (message_start, content_block_*, message_delta, message_stop) and also answers without streaming.
//
//   npm run demo-model      (DEMO_MODEL_PORT, default 0: any free port; the base URL is printed)
import { createServer } from 'node:http'

const wanted = process.env.DEMO_MODEL_TOOL ?? 'delete_file'
const input = JSON.parse(process.env.DEMO_MODEL_INPUT ?? '{"path":"/reports/old-draft.csv"}')
let ids = 0

/** The content blocks of the answer to one request. */
function answer(body) {
  const results = body.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((c) => c.type === 'tool_result')
  const tool = (body.tools ?? []).find((t) => t.name.endsWith(wanted))
  if (results.length === 0 && tool) return { content: [{ type: 'tool_use', id: `toolu_demo_${++ids}`, name: tool.name, input }], stop: 'tool_use' }
  const last = results.at(-1)
  const said = last ? (typeof last.content === 'string' ? last.content : last.content.map((p) => p.text).join('')) : 'nothing to do'
  return { content: [{ type: 'text', text: `Done. The tool said: ${said}` }], stop: 'end_turn' }
}

function sse(response, message, content, stop) {
  const send = (event, data) => response.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`)
  response.writeHead(200, { 'content-type': 'text/event-stream' })
  send('message_start', { message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 40, output_tokens: 1 } } })
  content.forEach((block, index) => {
    if (block.type === 'text') {
      send('content_block_start', { index, content_block: { type: 'text', text: '' } })
      send('content_block_delta', { index, delta: { type: 'text_delta', text: block.text } })
    } else {
      send('content_block_start', { index, content_block: { ...block, input: {} } })
      send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } })
    }
    send('content_block_stop', { index })
  })
  send('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 12 } })
  send('message_stop', {})
  response.end()
}

const http = createServer(async (request, response) => {
  const chunks = []
  for await (const chunk of request) chunks.push(chunk)
  if (request.method !== 'POST' || request.url !== '/v1/messages') {
    response.writeHead(404, { 'content-type': 'application/json' }).end('{"type":"error","error":{"type":"not_found_error","message":"no route"}}')
    return
  }
  const body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
  const { content, stop } = answer(body)
  const message = { id: `msg_demo_${++ids}`, type: 'message', role: 'assistant', model: body.model }
  console.log(`demo-model: ${stop === 'tool_use' ? `asks for ${content[0].name}` : 'answers'}`)
  if (body.stream) return sse(response, message, content, stop)
  response.writeHead(200, { 'content-type': 'application/json' })
  response.end(JSON.stringify({ ...message, content, stop_reason: stop, stop_sequence: null, usage: { input_tokens: 40, output_tokens: 12 } }))
})
http.listen(Number(process.env.DEMO_MODEL_PORT ?? 0), '127.0.0.1', () => {
  console.log(`demo-model: listening on http://127.0.0.1:${http.address().port}/v1`)
})
