// A local ElevenLabs Conversational AI service: `GET /v1/convai/conversation/get-signed-url` (checks
// `xi-api-key`) and the conversation WebSocket `/v1/convai/conversation`. After the client's
// `conversation_initiation_client_data` it sends `conversation_initiation_metadata` and the agent's greeting;
// after a `user_message` it pings and answers only once the matching `pong` came back.
import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import { WebSocketServer, type WebSocket } from 'ws'
import { failureReply, script, startHttpFake, type HttpFake } from './http.js'

export interface ElevenLabsStep {
  /** The agent's answer (default), or: */
  text?: string
  /** …a status for the signed-URL request; */
  status?: number
  /** …refuse the WebSocket upgrade with this status; */
  upgradeStatus?: number
  /** …send this raw frame instead of an answer; */
  raw?: string
  /** …never answer; */
  silent?: boolean
  /** …close the socket instead of answering. */
  close?: boolean
  /** The agent has no first_message: no greeting after the start. */
  noGreeting?: boolean
  /** Client tools the agent calls after the user's message, before it answers (each awaits its client_tool_result). */
  toolCalls?: Array<{ name: string; parameters?: unknown }>
}

export async function startElevenLabsFake(apiKey: string) {
  const steps = script<ElevenLabsStep>({ text: 'It is a bug.' })
  const received: any[][] = []
  /** Every client_tool_result received, in order. */
  const toolResults: any[] = []
  const connections: Array<{ url: string; headers: IncomingMessage['headers'] }> = []
  let current: ElevenLabsStep = {}
  const fake: HttpFake = await startHttpFake((exchange) => {
    if (exchange.path !== '/v1/convai/conversation/get-signed-url') return { status: 404, body: { detail: 'Not Found' } }
    if (exchange.headers['xi-api-key'] !== apiKey) return { status: 401, body: { detail: { status: 'invalid_api_key', message: 'Invalid API key' } } }
    current = steps.take()
    const failure = current.status ? failureReply(current) : null
    if (failure) return failure
    const agentId = exchange.url.searchParams.get('agent_id')
    return { body: { signed_url: `${fake.url.replace('http:', 'ws:')}/v1/convai/conversation?agent_id=${agentId}&conversation_signature=sig-1` } }
  })
  const wss = new WebSocketServer({ noServer: true })
  fake.server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1')
    // Public agents (no signed URL) take their step here.
    if (!url.searchParams.has('conversation_signature')) current = steps.take()
    if (url.pathname !== '/v1/convai/conversation' || current.upgradeStatus) {
      socket.end(`HTTP/1.1 ${current.upgradeStatus ?? 404} Refused\r\nContent-Length: 0\r\n\r\n`)
      return
    }
    connections.push({ url: request.url ?? '', headers: request.headers })
    wss.handleUpgrade(request, socket, head, (ws) => converse(ws, current))
  })

  function converse(ws: WebSocket, step: ElevenLabsStep) {
    const messages: any[] = []
    received.push(messages)
    let pingId = 0
    let pendingTools = 0
    const answer = () => {
      pingId += 1
      ws.send(JSON.stringify({ type: 'ping', ping_event: { event_id: pingId, ping_ms: 5 } }))
    }
    ws.on('message', (data) => {
      const message = JSON.parse(data.toString())
      messages.push(message)
      if (message.type === 'client_tool_result') {
        toolResults.push(message)
        if (--pendingTools === 0) answer()
        return
      }
      if (message.type === 'conversation_initiation_client_data') {
        ws.send(JSON.stringify({ type: 'conversation_initiation_metadata', conversation_initiation_metadata_event: { conversation_id: 'conv_1', agent_output_audio_format: 'pcm_16000', user_input_audio_format: 'pcm_16000' } }))
        if (!step.noGreeting) ws.send(JSON.stringify({ type: 'agent_response', agent_response_event: { agent_response: 'Hello! How can I help you today?' } }))
      } else if (message.type === 'user_message') {
        if (step.silent) return
        if (step.close) return ws.close(1011, 'internal error')
        if (step.raw !== undefined) return ws.send(step.raw)
        ws.send(JSON.stringify({ type: 'user_transcript', user_transcription_event: { user_transcript: message.text } }))
        if (step.toolCalls?.length) {
          pendingTools = step.toolCalls.length
          step.toolCalls.forEach((call, i) =>
            ws.send(JSON.stringify({ type: 'client_tool_call', client_tool_call: { tool_name: call.name, tool_call_id: `tool_${i + 1}`, parameters: call.parameters ?? {} } })),
          )
          return
        }
        answer()
      } else if (message.type === 'pong' && message.event_id === pingId) {
        ws.send(JSON.stringify({ type: 'agent_response', agent_response_event: { agent_response: step.text ?? 'It is a bug.' } }))
      }
    })
  }

  return {
    ...fake,
    steps,
    received,
    toolResults,
    connections,
    openSockets: () => wss.clients.size,
    close: async () => {
      for (const client of wss.clients) client.terminate()
      wss.close()
      await fake.close()
    },
  }
}
