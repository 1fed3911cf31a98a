// The adapter registry: providerType → adapter. Adding an adapter is one import and one line here, and its name
// in provider-types.ts. Every adapter is behind the authMode rules (auth-mode.ts).
import type { Adapter } from './adapter.js'
import { PROVIDER_TYPES, type ProviderType } from './provider-types.js'
import { withAuthMode } from './auth-mode.js'
import { customWebhook } from './custom-webhook.js'
import { customTokenOnly } from './custom-token-only.js'
import { claudeAdapter } from './claude.js'
import { mistralAdapter } from './mistral.js'
import { elevenLabsAdapter } from './elevenlabs.js'
import { copilotStudioAdapter } from './copilot-studio.js'
import { cursorAdapter } from './cursor.js'

/**
 * Every adapter by providerType, one per entry of PROVIDER_TYPES (provider-types.ts, which the agents' schema
 * reads); a key that is not its adapter's providerType throws.
 */
const registry: Record<ProviderType, Adapter> = {
  custom_webhook: customWebhook,
  custom_token_only: customTokenOnly,
  claude: claudeAdapter,
  mistral: mistralAdapter,
  elevenlabs: elevenLabsAdapter,
  copilot_studio: copilotStudioAdapter,
  cursor: cursorAdapter,
}

if (Object.keys(registry).join() !== PROVIDER_TYPES.join()) throw new Error('the adapter registry does not list the provider types of provider-types.ts, in order')
for (const [providerType, adapter] of Object.entries(registry)) {
  if (adapter.providerType !== providerType) throw new Error(`the adapter registered as ${providerType} says it is ${adapter.providerType}`)
}

const adapters: Record<string, Adapter> = Object.fromEntries(Object.entries(registry).map(([providerType, adapter]) => [providerType, withAuthMode(adapter)]))

export function adapterFor(providerType: string): Adapter | undefined {
  return Object.hasOwn(adapters, providerType) ? adapters[providerType] : undefined
}
