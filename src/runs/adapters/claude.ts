// providerType `claude`: the Anthropic Messages API (`POST {base}/messages`) through the AI SDK's Anthropic
// provider, with `system` = the agent's instructions and `x-api-key` = the credential (none under authMode none).
import type { Adapter } from './adapter.js'
import { answerWithModel } from './ai-sdk.js'
import { anthropicProvider } from './ai-sdk-modules.js'
import { fetchWithoutCredential } from './auth-mode.js'
import { configString, maxTokens, vendorBase } from './outcome.js'
import { buildPrompt } from './prompt.js'
import { runToolLoop } from './tool-loop.js'

export const ANTHROPIC_BASE = 'https://api.anthropic.com/v1'
const DEFAULT_MAX_TOKENS = 4096

export const claudeAdapter: Adapter = {
  providerType: 'claude',
  unavailable(agent) {
    if (!configString(agent, 'model')) return 'config.model is not set (e.g. "claude-sonnet-4-5").'
    if (agent.config.maxTokens !== undefined && maxTokens(agent.config) === null) return 'config.maxTokens must be a positive integer.'
    return null
  },
  async deliver(payload, agent, context) {
    const createAnthropic = await anthropicProvider()
    const provider = createAnthropic({ baseURL: vendorBase(agent, ANTHROPIC_BASE), apiKey: agent.secret ?? '', fetch: agent.secret ? context.fetch : fetchWithoutCredential(context, ['x-api-key']) })
    if (context.tools) return runToolLoop('Anthropic', provider(configString(agent, 'model') as string), buildPrompt(payload), context, { maxOutputTokens: maxTokens(agent.config) ?? DEFAULT_MAX_TOKENS, secret: agent.secret })
    return answerWithModel('Anthropic', provider(configString(agent, 'model') as string), buildPrompt(payload), context, {
      maxOutputTokens: maxTokens(agent.config) ?? DEFAULT_MAX_TOKENS,
      secret: agent.secret,
    })
  },
}
