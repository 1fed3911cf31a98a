// The adapter registry: providerType → adapter. Adding an adapter is one import and one line here.
import type { Adapter } from './adapter.js'
import { customWebhook } from './custom-webhook.js'
import { customTokenOnly } from './custom-token-only.js'

const adapters: Record<string, Adapter> = {
  custom_webhook: customWebhook,
  custom_token_only: customTokenOnly,
}

export function adapterFor(providerType: string): Adapter | undefined {
  return Object.hasOwn(adapters, providerType) ? adapters[providerType] : undefined
}
