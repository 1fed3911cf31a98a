// providerType `elevenlabs`: Conversational AI in text-only mode over its WebSocket (`ws`, through the
// context's lookup so the egress guard sees the resolved address). `authMode: api_key` agents first get a signed
// URL (`GET {base}/v1/convai/conversation/get-signed-url` with `xi-api-key`); public agents connect with their
// `agent_id`. We wait for the conversation to start and for the agent's greeting (its first_message, sent
// unasked right after the start; at most GREETING_WAIT_MS, as an agent may have none), then send the prompt as one
// `user_message`, answer every `ping` and take the first `agent_response` after our message. A `client_tool_call`
// is answered with `client_tool_result` from the agent's tools (context.clientTools; docs/tools-and-approvals.md).
import { isIP } from 'node:net'
import WebSocket from 'ws'
import type { Adapter, AdapterContext, AgentTarget, DeliveryOutcome } from './adapter.js'
import { callJson, configString, errorOutcome, isObject, malformed, statusOutcome, traceHeaders, vendorBase } from './outcome.js'
import { buildPrompt, promptAsText } from './prompt.js'

export const ELEVENLABS_BASE = 'https://api.elevenlabs.io'
const VENDOR = 'ElevenLabs'
export const GREETING_WAIT_MS = 1500

async function conversationUrl(agent: AgentTarget, agentId: string, context: AdapterContext): Promise<{ url: string } | { outcome: DeliveryOutcome }> {
  const base = vendorBase(agent, ELEVENLABS_BASE)
  if (agent.authMode !== 'api_key') {
    const url = new URL(`${base}/v1/convai/conversation`)
    url.protocol = url.protocol === 'http:' ? 'ws:' : 'wss:'
    url.searchParams.set('agent_id', agentId)
    return { url: url.href }
  }
  const reply = await callJson(VENDOR, context, `${base}/v1/convai/conversation/get-signed-url?agent_id=${encodeURIComponent(agentId)}`, {
    method: 'GET',
    headers: { 'xi-api-key': agent.secret ?? '' },
  })
  if (!reply.ok) return { outcome: reply.outcome }
  const signed = isObject(reply.body) ? reply.body.signed_url : undefined
  if (typeof signed !== 'string' || !/^wss?:\/\//.test(signed)) return { outcome: malformed(VENDOR, 'answered without a signed_url') }
  return { url: signed }
}

/**
 * net.connect skips `lookup` for an IP literal, so a literal host is put through the context's lookup first (which
 * answers it unchanged, or refuses it): the egress guard judges it like any resolved name.
 */
function checkLiteralHost(url: string, context: AdapterContext): Promise<DeliveryOutcome | null> {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '')
  if (isIP(host) === 0) return Promise.resolve(null)
  return new Promise((resolve) => {
    context.lookup(host, { all: true }, (error) => resolve(error ? errorOutcome(VENDOR, error, context) : null))
  })
}

async function converse(url: string, text: string, context: AdapterContext): Promise<DeliveryOutcome> {
  const refused = await checkLiteralHost(url, context)
  if (refused) return refused
  return new Promise((resolve) => {
    let settled = false
    let sent = false
    let greetingTimer: NodeJS.Timeout | undefined
    const sendTask = () => {
      clearTimeout(greetingTimer)
      if (sent || socket.readyState !== WebSocket.OPEN) return
      sent = true
      socket.send(JSON.stringify({ type: 'user_message', text }))
    }
    const socket = new WebSocket(url, { lookup: context.lookup, followRedirects: false, headers: traceHeaders(context) })
    const finish = (outcome: DeliveryOutcome) => {
      if (settled) return
      settled = true
      clearTimeout(greetingTimer)
      context.signal.removeEventListener('abort', onAbort)
      if (socket.readyState === WebSocket.OPEN) socket.close(1000)
      else socket.terminate()
      resolve(outcome)
    }
    const onAbort = () => finish(errorOutcome(VENDOR, context.signal.reason, context))
    if (context.signal.aborted) return onAbort()
    context.signal.addEventListener('abort', onAbort)

    socket.on('open', () => {
      socket.send(JSON.stringify({ type: 'conversation_initiation_client_data', conversation_config_override: { conversation: { text_only: true } } }))
    })
    socket.on('unexpected-response', (_request, response) => {
      finish(statusOutcome(VENDOR, response.statusCode ?? 502, response.headers['retry-after'] as string | undefined))
    })
    socket.on('error', (error) => finish(errorOutcome(VENDOR, error, context)))
    socket.on('close', (code) => {
      finish(sent ? malformed(VENDOR, `closed the conversation (code ${code}) without answering`) : { kind: 'retry', detail: `${VENDOR} closed the conversation (code ${code}) before it started.` })
    })
    socket.on('message', (data) => {
      let event: unknown
      try {
        event = JSON.parse(data.toString())
      } catch {
        return finish(malformed(VENDOR, 'sent a message that is not JSON'))
      }
      if (!isObject(event)) return finish(malformed(VENDOR, 'sent a message that is not an object'))
      switch (event.type) {
        case 'conversation_initiation_metadata':
          if (!sent && !greetingTimer) greetingTimer = setTimeout(sendTask, GREETING_WAIT_MS)
          return
        case 'ping': {
          const ping = isObject(event.ping_event) ? event.ping_event : {}
          const delay = typeof ping.ping_ms === 'number' && ping.ping_ms > 0 ? Math.min(ping.ping_ms, 1000) : 0
          setTimeout(() => socket.readyState === WebSocket.OPEN && socket.send(JSON.stringify({ type: 'pong', event_id: ping.event_id })), delay)
          return
        }
        case 'agent_response': {
          if (!sent) return sendTask() // the agent's greeting (first_message), not the answer to our task
          const response = isObject(event.agent_response_event) ? event.agent_response_event.agent_response : undefined
          if (typeof response !== 'string') return finish(malformed(VENDOR, 'sent an agent_response without agent_response_event.agent_response'))
          if (!response.trim()) return finish(malformed(VENDOR, 'answered with no text'))
          return finish({ kind: 'answered', output: { text: response } })
        }
        case 'client_tool_call': {
          // A client tool (docs/tools-and-approvals.md): Tandem makes the call and answers with its result.
          const call = isObject(event.client_tool_call) ? event.client_tool_call : {}
          const id = call.tool_call_id
          if (typeof id !== 'string') return
          const name = typeof call.tool_name === 'string' ? call.tool_name : ''
          const answer = context.clientTools
            ? context.clientTools.call(name, call.parameters ?? {}, context.signal)
            : Promise.resolve({ ok: false, text: `Tandem offers this agent no tools (${name}).` })
          const reply = ({ ok, text }: { ok: boolean; text: string }) => {
            if (!settled && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ type: 'client_tool_result', tool_call_id: id, result: text, is_error: !ok }))
          }
          void answer.then(reply, () => reply({ ok: false, text: `Tandem could not make the call of ${name}.` }))
          return
        }
        default:
          return // transcripts, corrections, metadata and the like carry nothing we need
      }
    })
  })
}

export const elevenLabsAdapter: Adapter = {
  providerType: 'elevenlabs',
  unavailable(agent) {
    if (!configString(agent, 'agentId')) return 'config.agentId is not set (the ElevenLabs agent id).'
    return null
  },
  async deliver(payload, agent, context) {
    const target = await conversationUrl(agent, configString(agent, 'agentId') as string, context)
    if ('outcome' in target) return target.outcome
    return converse(target.url, promptAsText(buildPrompt(payload)), context)
  },
}
