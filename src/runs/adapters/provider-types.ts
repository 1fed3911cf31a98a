// The provider types: the one list, a leaf. The agents' schema (and so the OpenAPI document) reads it here without
// loading any adapter or vendor SDK; the adapter registry (index.ts) has one adapter per entry, checked when it loads.
export const PROVIDER_TYPES = ['custom_webhook', 'custom_token_only', 'claude', 'mistral', 'elevenlabs', 'copilot_studio', 'cursor'] as const

export type ProviderType = (typeof PROVIDER_TYPES)[number]
