// Providers, auth modes and each provider's config fields in words, for the agents' form and list.

export const PROVIDER_NAMES: Record<string, string> = {
  custom_webhook: 'Webhook',
  custom_token_only: 'Claims its tasks (agent key)',
  claude: 'Claude (Anthropic)',
  mistral: 'Mistral',
  elevenlabs: 'ElevenLabs agent',
  copilot_studio: 'Copilot Studio (Microsoft)',
  cursor: 'Cursor background agent',
}

export const AUTH_MODE_NAMES: Record<string, string> = { api_key: 'API key', direct_line: 'Direct Line secret', none: 'None' }

export const providerName = (providerType: string) => PROVIDER_NAMES[providerType] ?? providerType

/** The config keys a provider reads, as labelled fields; the rest stays in the JSON under "Advanced". */
export const CONFIG_FIELDS: Record<string, Array<{ key: string; label: string; hint: string }>> = {
  claude: [{ key: 'model', label: 'Model', hint: 'e.g. claude-sonnet-4-5; empty for the default' }],
  mistral: [{ key: 'model', label: 'Model', hint: 'e.g. mistral-large-latest; empty for the default' }],
  elevenlabs: [{ key: 'agentId', label: 'Agent ID', hint: 'the ElevenLabs agent to talk to' }],
  cursor: [
    { key: 'repository', label: 'Repository', hint: 'e.g. https://github.com/acme/app' },
    { key: 'ref', label: 'Ref', hint: 'a branch or tag, e.g. main' },
  ],
}
