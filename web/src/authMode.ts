// Which providerType and authMode (and credential) cannot work together, shown as a warning before an agent is
// saved. A mirror of src/runs/adapters/auth-mode.ts (ACCEPTED, effectiveAuthMode, authModeProblem; the rules are
// in docs/agents-templates-assets.md): the console imports nothing from the server, so keep the two in step.

type AuthMode = 'api_key' | 'direct_line' | 'none'

/** The modes each providerType can work with; anything else fails the phase with agent-misconfigured. */
const ACCEPTED: Record<string, readonly AuthMode[]> = {
  claude: ['api_key', 'none'],
  mistral: ['api_key', 'none'],
  cursor: ['api_key', 'none'],
  elevenlabs: ['api_key', 'none'],
  custom_webhook: ['api_key', 'none'],
  custom_token_only: ['none'],
  copilot_studio: ['direct_line'],
}

/** What an absent authMode means for this agent. */
export function effectiveAuthMode(providerType: string, authMode: AuthMode | null, hasCredential: boolean): AuthMode {
  if (authMode) return authMode
  if (providerType === 'copilot_studio') return 'direct_line'
  if (providerType === 'custom_webhook' || providerType === 'custom_token_only') return 'none'
  return hasCredential ? 'api_key' : 'none'
}

/** Why the agent's runs will fail at once, in the operator's words, or null. */
export function authModeWarning(providerType: string, authMode: AuthMode | null, hasCredential: boolean): string | null {
  const accepted = ACCEPTED[providerType]
  if (!accepted) return null
  const mode = effectiveAuthMode(providerType, authMode, hasCredential)
  const shown = authMode === null ? `no auth mode (so ${mode})` : `auth mode ${mode}`
  if (!accepted.includes(mode)) {
    return `${providerType} cannot work with ${shown}: it takes ${accepted.join(' or ')}. Its phases will fail at once (agent-misconfigured).`
  }
  if ((mode === 'api_key' || mode === 'direct_line') && !hasCredential) {
    return `${providerType} with ${shown} needs a credential (the ${mode === 'direct_line' ? 'Direct Line secret' : 'API key'} to send). Its phases will fail at once (agent-misconfigured).`
  }
  return null
}
