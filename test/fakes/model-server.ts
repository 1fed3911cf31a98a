// A local HTTP server that speaks the Anthropic Messages API and the OpenAI / Mistral chat-completions API
// well enough for the AI SDK's clients: each test says what the "model" answers and how slowly.
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Scripted {
  /** The model's answer: an object (sent as structured output) or raw text. */
  answer: unknown
  delayMs?: number
  status?: number
}

export interface Recorded {
  path: string
  headers: IncomingMessage['headers']
  body: any
}

export interface FakeModelServer {
  url: string
  requests: Recorded[]
  script(next: Scripted): void
  close(): Promise<void>
}

function anthropicReply(body: any, answer: unknown) {
  const text = typeof answer === 'string' ? answer : JSON.stringify(answer)
  const viaTool = Array.isArray(body.tools) && body.tools.some((t: { name: string }) => t.name === 'json')
  return {
    id: 'msg_fake',
    type: 'message',
    role: 'assistant',
    model: body.model,
    content: viaTool && typeof answer !== 'string' ? [{ type: 'tool_use', id: 'toolu_fake', name: 'json', input: answer }] : [{ type: 'text', text }],
    stop_reason: viaTool ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 10 },
  }
}

function chatCompletionReply(body: any, answer: unknown) {
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    choices: [{ index: 0, message: { role: 'assistant', content: typeof answer === 'string' ? answer : JSON.stringify(answer) }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
  }
}

export async function startFakeModelServer(): Promise<FakeModelServer> {
  let next: Scripted = { answer: 'nothing scripted' }
  const requests: Recorded[] = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk) => chunks.push(chunk))
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}')
      requests.push({ path: req.url ?? '', headers: req.headers, body })
      const { answer, delayMs = 0, status = 200 } = next
      const timer = setTimeout(() => {
        if (status !== 200) {
          res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { type: 'api_error', message: 'scripted failure' } }))
          return
        }
        const reply = req.url?.endsWith('/messages') ? anthropicReply(body, answer) : chatCompletionReply(body, answer)
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply))
      }, delayMs)
      res.on('close', () => clearTimeout(timer))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    script: (scripted) => {
      next = scripted
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
