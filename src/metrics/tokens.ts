// tandem_agent_tokens_total{provider,direction}: the tokens vendors reported for agents' answers, counted on the
// instance that received the answer (sum the series over instances).
import type { FastifyInstance } from 'fastify'

export function countTokens(app: FastifyInstance, providerType: string, usage: { inputTokens: number; outputTokens: number }): void {
  if (usage.inputTokens > 0) app.metrics.agentTokens.inc({ provider: providerType, direction: 'input' }, usage.inputTokens)
  if (usage.outputTokens > 0) app.metrics.agentTokens.inc({ provider: providerType, direction: 'output' }, usage.outputTokens)
}
