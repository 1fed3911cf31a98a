// authMode, the same for every provider (docs/agents-and-vendors.md, "authMode"): which modes each providerType takes, what an
// absent mode means, and the combinations that cannot work (→ the phase fails at once with agent-misconfigured,
// naming both fields). The adapter registry puts every adapter behind `withAuthMode`, so an adapter only ever
// sees an effective mode, and no secret at all when that mode is `none` (custom_webhook keeps it to sign with:
// a signature does not send the credential).
import type { Adapter, AdapterContext, AgentTarget, DeliveryOutcome } from './adapter.js'
import type { ProviderType } from './provider-types.js'

type AuthMode = NonNullable<AgentTarget['authMode']>

/** The modes each providerType can work with; anything else is agent-misconfigured. Keyed by the registry's types: one missing or extra does not compile. */
const ACCEPTED: Record<ProviderType, readonly AuthMode[]> = {
  claude: ['api_key', 'none'],
  mistral: ['api_key', 'none'],
  cursor: ['api_key', 'none'],
  elevenlabs: ['api_key', 'none'],
  custom_webhook: ['api_key', 'none'],
  // Nothing is sent to a token-only agent: it claims its tasks with an agent key.
  custom_token_only: ['none'],
  copilot_studio: ['direct_line'],
}

/** What the rules read of an agent: `hasCredential` is true when it names a credential (credentialId set). */
interface AuthFields {
  providerType: string
  authMode: AuthMode | null
  hasCredential: boolean
}

const fieldsOf = (agent: AgentTarget): AuthFields => ({ providerType: agent.providerType, authMode: agent.authMode, hasCredential: agent.secret !== null })

/** What an absent (null) authMode means for this agent. */
export function effectiveAuthMode(agent: AuthFields): AuthMode {
  if (agent.authMode) return agent.authMode
  if (agent.providerType === 'copilot_studio') return 'direct_line'
  if (agent.providerType === 'custom_webhook' || agent.providerType === 'custom_token_only') return 'none'
  return agent.hasCredential ? 'api_key' : 'none'
}

/** Why this providerType and authMode (and credential) cannot work together, or null. Never holds the secret. */
export function authModeProblem(agent: AuthFields): string | null {
  const mode = effectiveAuthMode(agent)
  const accepted = Object.hasOwn(ACCEPTED, agent.providerType) ? ACCEPTED[agent.providerType as ProviderType] : undefined
  if (!accepted) return null // an unknown providerType is the registry's agent-unavailable
  const shown = agent.authMode === null ? `no authMode (so ${mode})` : `authMode ${mode}`
  if (!accepted.includes(mode)) {
    return `providerType ${agent.providerType} cannot work with ${shown}: it takes ${accepted.map((m) => `"${m}"`).join(' or ')}.`
  }
  if ((mode === 'api_key' || mode === 'direct_line') && !agent.hasCredential) {
    return `providerType ${agent.providerType} with ${shown} needs a credentialId: the ${mode === 'direct_line' ? 'Direct Line secret' : 'API key'} to send.`
  }
  return null
}

/** The agent as its adapter sees it: an effective authMode, and no secret when nothing is to be sent. */
function targetFor(agent: AgentTarget): AgentTarget {
  const authMode = effectiveAuthMode(fieldsOf(agent))
  const keepsSecret = authMode !== 'none' || agent.providerType === 'custom_webhook'
  return { ...agent, authMode, secret: keepsSecret ? agent.secret : null }
}

function misconfigured(detail: string): DeliveryOutcome {
  return { kind: 'failed', code: 'agent-misconfigured', detail }
}

/**
 * An adapter behind the authMode rules. `unavailable` says nothing of a misconfigured agent, so that the
 * delivery reports it with its own code (agent-misconfigured) rather than agent-unavailable.
 */
export function withAuthMode(adapter: Adapter): Adapter {
  const guarded: Adapter = {
    ...adapter,
    unavailable: (agent) => (authModeProblem(fieldsOf(agent)) ? null : adapter.unavailable(targetFor(agent))),
    deliver: async (payload, agent, context) => {
      const problem = authModeProblem(fieldsOf(agent))
      return problem ? misconfigured(problem) : adapter.deliver(payload, targetFor(agent), context)
    },
  }
  const poll = adapter.poll
  if (poll) {
    guarded.poll = async (state, payload, agent, context) => {
      const problem = authModeProblem(fieldsOf(agent))
      return problem ? misconfigured(problem) : poll.call(adapter, state, payload, targetFor(agent), context)
    }
  }
  return guarded
}

/**
 * The context's fetch without the credential headers a client library adds even with an empty key (the AI
 * SDK sends `x-api-key: ` or `Authorization: Bearer ` for ''): under authMode `none` nothing is sent.
 */
export function fetchWithoutCredential(context: AdapterContext, names: readonly string[]): typeof fetch {
  return (input, init) => {
    const headers = new Headers(init?.headers)
    for (const name of names) headers.delete(name)
    return context.fetch(input, { ...init, headers })
  }
}
