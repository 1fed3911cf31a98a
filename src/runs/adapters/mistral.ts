// providerType `mistral`: with `config.agentId`, the Agents API (`POST {base}/agents/completions`, plain HTTP:
// the AI SDK has no agents endpoint); otherwise chat completions with `config.model` through the AI SDK's
// Mistral provider. The credential is sent as a Bearer token either way (nothing under authMode none).
import type { Adapter, AdapterContext, AgentTarget, DeliveryOutcome, Usage } from './adapter.js'
import { answerWithModel } from './ai-sdk.js'
import { mistralProvider } from './ai-sdk-modules.js'
import { fetchWithoutCredential } from './auth-mode.js'
import { callJson, configString, errorOutcome, isObject, malformed, maxTokens, statusOutcome, traceHeaders, vendorBase } from './outcome.js'
import { forEachEventData } from './sse-lines.js'
import { buildPrompt, promptAsText, type Prompt } from './prompt.js'
import { runToolLoop } from './tool-loop.js'
import { MAX_MISTRAL_STREAM_BYTES } from '../limits.js'

export const MISTRAL_BASE = 'https://api.mistral.ai/v1'

/** Mistral's message content: a string, or an array of chunks of which the `text` ones count. */
function contentText(content: unknown): string | null {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return null
  const texts = content.filter((c) => isObject(c) && c.type === 'text' && typeof c.text === 'string').map((c) => c.text as string)
  return texts.length > 0 ? texts.join('') : null
}

/** Mistral's `usage` ({ prompt_tokens, completion_tokens }) as Tandem records it, or null. */
function usageOf(value: unknown): Usage | null {
  if (!isObject(value)) return null
  const count = (n: unknown) => (typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : null)
  const input = count(value.prompt_tokens)
  const output = count(value.completion_tokens)
  return input === null && output === null ? null : { inputTokens: input ?? 0, outputTokens: output ?? 0 }
}

/** The Agents API with `stream: true`: chat-completion chunks as Server-Sent Events, `[DONE]` at the end. */
async function streamWithAgent(agentId: string, prompt: Prompt, agent: AgentTarget, context: AdapterContext, onDelta: (text: string) => void): Promise<DeliveryOutcome> {
  const tokens = maxTokens(agent.config)
  let response: Response
  try {
    response = await context.fetch(`${vendorBase(agent, MISTRAL_BASE)}/agents/completions`, {
      method: 'POST',
      headers: { accept: 'text/event-stream', 'content-type': 'application/json', ...traceHeaders(context), ...(agent.secret ? { authorization: `Bearer ${agent.secret}` } : {}) },
      body: JSON.stringify({ agent_id: agentId, messages: [{ role: 'user', content: promptAsText(prompt) }], stream: true, ...(tokens ? { max_tokens: tokens } : {}) }),
      redirect: 'manual',
      signal: context.signal,
    })
  } catch (error) {
    return errorOutcome('Mistral', error, context)
  }
  if (response.status < 200 || response.status >= 300) {
    await response.body?.cancel().catch(() => undefined)
    return statusOutcome('Mistral', response.status, response.headers.get('retry-after'))
  }
  if (!response.body) return malformed('Mistral', 'answered with an empty stream')
  let text = ''
  let usage: Usage | null = null
  let finished = false
  try {
    const end = await forEachEventData(response.body, (data) => {
      if (data.trim() === '[DONE]') return true
      let chunk: unknown
      try {
        chunk = JSON.parse(data)
      } catch {
        return false
      }
      if (!isObject(chunk)) return false
      usage = usageOf(chunk.usage) ?? usage
      const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined
      if (isObject(choice)) {
        const piece = isObject(choice.delta) ? contentText(choice.delta.content) : null
        if (piece) {
          text += piece
          onDelta(piece)
        }
        if (typeof choice.finish_reason === 'string') finished = true
      }
      return false
    }, MAX_MISTRAL_STREAM_BYTES)
    if (end === 'too-large') return malformed('Mistral', `answered with a stream larger than ${MAX_MISTRAL_STREAM_BYTES} bytes`)
  } catch (error) {
    return errorOutcome('Mistral', error, context)
  }
  if (!finished && text !== '') return { kind: 'retry', detail: 'Mistral\'s stream ended before the answer was finished.' }
  if (!text.trim()) return malformed('Mistral', 'answered with no text')
  return { kind: 'answered', output: { text }, usage }
}

async function answerWithAgent(agentId: string, prompt: Prompt, agent: AgentTarget, context: AdapterContext): Promise<DeliveryOutcome> {
  if (context.onDelta) return streamWithAgent(agentId, prompt, agent, context, context.onDelta)
  const tokens = maxTokens(agent.config)
  const reply = await callJson('Mistral', context, `${vendorBase(agent, MISTRAL_BASE)}/agents/completions`, {
    method: 'POST',
    headers: agent.secret ? { authorization: `Bearer ${agent.secret}` } : {},
    body: { agent_id: agentId, messages: [{ role: 'user', content: promptAsText(prompt) }], ...(tokens ? { max_tokens: tokens } : {}) },
  })
  if (!reply.ok) return reply.outcome
  const choice = isObject(reply.body) && Array.isArray(reply.body.choices) ? reply.body.choices[0] : undefined
  const text = isObject(choice) && isObject(choice.message) ? contentText(choice.message.content) : null
  if (text === null) return malformed('Mistral', 'answered without a message (choices[0].message.content)')
  if (!text.trim()) return malformed('Mistral', 'answered with no text')
  return { kind: 'answered', output: { text }, usage: isObject(reply.body) ? usageOf(reply.body.usage) : null }
}

export const mistralAdapter: Adapter = {
  providerType: 'mistral',
  unavailable(agent) {
    if (!configString(agent, 'agentId') && !configString(agent, 'model')) {
      return 'Neither config.model (chat completions, e.g. "mistral-large-latest") nor config.agentId (Agents API) is set.'
    }
    if (agent.config.maxTokens !== undefined && maxTokens(agent.config) === null) return 'config.maxTokens must be a positive integer.'
    return null
  },
  async deliver(payload, agent, context) {
    const prompt = buildPrompt(payload)
    const agentId = configString(agent, 'agentId')
    if (agentId) return answerWithAgent(agentId, prompt, agent, context)
    const createMistral = await mistralProvider()
    const provider = createMistral({ baseURL: vendorBase(agent, MISTRAL_BASE), apiKey: agent.secret ?? '', fetch: agent.secret ? context.fetch : fetchWithoutCredential(context, ['authorization']) })
    const tokens = maxTokens(agent.config)
    if (context.tools) return runToolLoop('Mistral', provider(configString(agent, 'model') as string), prompt, context, { ...(tokens ? { maxOutputTokens: tokens } : {}), secret: agent.secret })
    return answerWithModel('Mistral', provider(configString(agent, 'model') as string), prompt, context, {
      ...(tokens ? { maxOutputTokens: tokens } : {}),
      secret: agent.secret,
    })
  },
}
