// The adapter registry: providerType → adapter. Adding an adapter is one import and one line here. Every
// adapter is behind the authMode rules (auth-mode.ts).
import type { Adapter } from './adapter.js'
import { withAuthMode } from './auth-mode.js'
import { customWebhook } from './custom-webhook.js'
import { customTokenOnly } from './custom-token-only.js'
import { claudeAdapter } from './claude.js'
import { mistralAdapter } from './mistral.js'
import { elevenLabsAdapter } from './elevenlabs.js'
import { copilotStudioAdapter } from './copilot-studio.js'
import { cursorAdapter } from './cursor.js'

/**
 * Every adapter by providerType: the one list of provider types. The agents' schema (and so the OpenAPI
 * document) and authMode's rules derive theirs from it; a key that is not its adapter's providerType throws.
 */
const registry = {
  custom_webhook: customWebhook,
  custom_token_only: customTokenOnly,
  claude: claudeAdapter,
  mistral: mistralAdapter,
  elevenlabs: elevenLabsAdapter,
  copilot_studio: copilotStudioAdapter,
  cursor: cursorAdapter,
} satisfies Record<string, Adapter>

export type ProviderType = keyof typeof registry
export const PROVIDER_TYPES = Object.keys(registry) as ProviderType[]

for (const [providerType, adapter] of Object.entries(registry)) {
  if (adapter.providerType !== providerType) throw new Error(`the adapter registered as ${providerType} says it is ${adapter.providerType}`)
}

const adapters: Record<string, Adapter> = Object.fromEntries(Object.entries(registry).map(([providerType, adapter]) => [providerType, withAuthMode(adapter)]))

export function adapterFor(providerType: string): Adapter | undefined {
  return Object.hasOwn(adapters, providerType) ? adapters[providerType] : undefined
}
