// providerType `mistral`: with `config.agentId`, the Agents API (`POST {base}/agents/completions`, plain HTTP:
// the AI SDK has no agents endpoint); otherwise chat completions with `config.model` through the AI SDK's
// Mistral provider. The credential is sent as a Bearer token either way (nothing under authMode none).
import { createMistral } from '@ai-sdk/mistral'
import type { Adapter, AdapterContext, AgentTarget, DeliveryOutcome } from './adapter.js'
import { answerWithModel } from './ai-sdk.js'
import { fetchWithoutCredential } from './auth-mode.js'
import { callJson, configString, isObject, malformed, maxTokens, vendorBase } from './outcome.js'
import { buildPrompt, promptAsText, type Prompt } from './prompt.js'
import { runToolLoop } from '../../tools/loop.js'

export const MISTRAL_BASE = 'https://api.mistral.ai/v1'

/** Mistral's message content: a string, or an array of chunks of which the `text` ones count. */
function contentText(content: unknown): string | null {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return null
  const texts = content.filter((c) => isObject(c) && c.type === 'text' && typeof c.text === 'string').map((c) => c.text as string)
  return texts.length > 0 ? texts.join('') : null
}

async function answerWithAgent(agentId: string, prompt: Prompt, agent: AgentTarget, context: AdapterContext): Promise<DeliveryOutcome> {
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
  return { kind: 'answered', output: { text } }
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
    const provider = createMistral({ baseURL: vendorBase(agent, MISTRAL_BASE), apiKey: agent.secret ?? '', fetch: agent.secret ? context.fetch : fetchWithoutCredential(context, ['authorization']) })
    const tokens = maxTokens(agent.config)
    if (context.tools) return runToolLoop('Mistral', provider(configString(agent, 'model') as string), prompt, context, { ...(tokens ? { maxOutputTokens: tokens } : {}), secret: agent.secret })
    return answerWithModel('Mistral', provider(configString(agent, 'model') as string), prompt, context, {
      ...(tokens ? { maxOutputTokens: tokens } : {}),
      secret: agent.secret,
    })
  },
}
