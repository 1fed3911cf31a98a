// A small webhook agent for Tandem, on loopback: the one the README's walk-through calls, and the example to
// copy when you write your own. Tandem POSTs each task (a `custom_webhook` agent's `endpointUrl`) with
// Standard Webhooks headers; this agent checks the signature with the agent's secret, then answers at once
// with `{ "output": { "text": … } }`. An agent that needs longer answers 202 and POSTs its result to
// `task.result.url` later, with `Authorization: Bearer <task.result.token>`.
//
//   DEMO_AGENT_SECRET=whsec_… npm run demo-agent      (DEMO_AGENT_PORT, default 4000)
//
// The secret is the agent's credential in Tandem (POST /api/credentials). Plain JavaScript and one
// dependency (`standardwebhooks`), so the file reads top to bottom and runs with `node` alone.
import { createServer } from 'node:http'
import { Webhook } from 'standardwebhooks'

const secret = process.env.DEMO_AGENT_SECRET ?? ''
const port = Number(process.env.DEMO_AGENT_PORT ?? 4000)
const MAX_BODY_BYTES = 2 * 1024 * 1024

if (!secret) {
  console.error('demo-agent: set DEMO_AGENT_SECRET to the agent\'s credential secret (e.g. whsec_ and 24 random bytes in base64)')
  process.exit(1)
}
// Tandem signs with a `whsec_<base64>` secret as a Standard Webhooks key, and with any other secret's UTF-8 bytes.
let webhook
try {
  webhook = secret.startsWith('whsec_') ? new Webhook(secret) : new Webhook(secret, { format: 'raw' })
} catch (error) {
  console.error(`demo-agent: DEMO_AGENT_SECRET is not a whsec_ key (${error.message}): whsec_ must be followed by base64`)
  process.exit(1)
}

// Delivery is at least once: a task may come again with the same `webhook-id` (after a time-out or a crash).
// Answer it the same way instead of doing the work twice. Bounded: the oldest ids are forgotten first.
const answered = new Map()
const REMEMBERED = 1000

const QUOTE_LIMIT = 200
const oneLine = (text, limit) => {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > limit ? `${flat.slice(0, limit - 1)}…` : flat
}

/** The agent's work. A real agent would call a model or a tool here; this one says what it was given. */
function answerTask(task) {
  const lines = [`Demo agent: I read the phase "${task.phase.phaseName}".`]
  if (task.phase.instructions) lines.push(`Instructions: ${task.phase.instructions}`)
  if (task.phase.feedback) lines.push(`Feedback taken into account: ${task.phase.feedback}`)
  const input = task.run.input ?? {}
  if (Object.keys(input).length > 0) lines.push(`Input: ${JSON.stringify(input)}`)
  // A person's latest message, never an agent's: quoting its own earlier answers would nest them, and each
  // run's answer would grow. Cut to one short line.
  const latest = task.messages?.filter((message) => message.authorType !== 'agent').at(-1)
  if (latest?.text) lines.push(`Latest message in the stream: ${oneLine(latest.text, QUOTE_LIMIT)}`)
  return { output: { text: lines.join('\n') } }
}

function send(response, status, body) {
  response.writeHead(status, { 'content-type': 'application/json' })
  response.end(JSON.stringify(body))
}

const server = createServer((request, response) => {
  if (request.method === 'GET') return send(response, 200, { ok: true }) // a health check for scripts
  if (request.method !== 'POST') return send(response, 405, { error: { detail: 'POST a task' } })
  const chunks = []
  let size = 0
  request.on('data', (chunk) => {
    size += chunk.length
    if (size > MAX_BODY_BYTES) request.destroy()
    else chunks.push(chunk)
  })
  request.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8')
    let task
    try {
      // Checks webhook-id, webhook-timestamp (within five minutes) and webhook-signature, then parses the body.
      task = webhook.verify(body, {
        'webhook-id': request.headers['webhook-id'] ?? '',
        'webhook-timestamp': request.headers['webhook-timestamp'] ?? '',
        'webhook-signature': request.headers['webhook-signature'] ?? '',
      })
    } catch (error) {
      console.error(`demo-agent: refused a request: ${error.message}`)
      return send(response, 401, { error: { detail: 'the signature does not verify' } })
    }
    const id = request.headers['webhook-id']
    if (!answered.has(id)) {
      answered.set(id, answerTask(task))
      if (answered.size > REMEMBERED) answered.delete(answered.keys().next().value)
      console.log(`demo-agent: answered task ${task.task.id} (phase "${task.phase.phaseName}" of run ${task.run.id})`)
    }
    send(response, 200, answered.get(id))
  })
})

server.on('error', (error) => {
  console.error(`demo-agent: cannot listen on 127.0.0.1:${port} (${error.code ?? error.message}); set DEMO_AGENT_PORT to a free port`)
  process.exit(1)
})
server.listen(port, '127.0.0.1', () => console.log(`demo-agent: listening on http://127.0.0.1:${server.address().port}/`))
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.close(() => process.exit(0)))
