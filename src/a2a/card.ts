// An exposed cycle's Agent Card (docs/a2a.md): one cycle is one agent, its skill the cycle's own unless the
// exposure names its fields. Public, so it holds nothing but the cycle's name, description and skill.
import type { FastifyInstance } from 'fastify'
import type { SavedCycle } from '../cycles/schemas.js'

/** Where clients reach this instance: TANDEM_PUBLIC_URL, else the address it listens on. */
export function publicBase(app: FastifyInstance): string {
  return (app.config.runs.publicUrl ?? app.listening.origin ?? 'http://127.0.0.1').replace(/\/+$/, '')
}

export const endpointUrl = (app: FastifyInstance, cycleId: string) => `${publicBase(app)}/a2a/cycles/${cycleId}`
export const cardUrl = (app: FastifyInstance, cycleId: string) => `${endpointUrl(app, cycleId)}/.well-known/agent-card.json`

/** The card as ProtoJSON (what the wire carries, and what the SDK's AgentCard.fromJSON reads). */
export function agentCardJson(app: FastifyInstance, cycle: SavedCycle): Record<string, unknown> {
  const skill = cycle.a2a?.skill ?? {}
  return {
    name: cycle.triggerName,
    description: cycle.description,
    version: '1.0',
    supportedInterfaces: [{ url: endpointUrl(app, cycle.id), protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: { streaming: true, pushNotifications: true, extendedAgentCard: false },
    securitySchemes: { tandemApiKey: { httpAuthSecurityScheme: { scheme: 'Bearer' } } },
    securityRequirements: [{ schemes: { tandemApiKey: { list: [] } } }],
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: ['text/plain'],
    skills: [{
      id: skill.id ?? cycle.id,
      name: skill.name ?? cycle.triggerName,
      description: skill.description ?? cycle.description,
      tags: skill.tags ?? [],
      examples: skill.examples ?? [],
    }],
  }
}
