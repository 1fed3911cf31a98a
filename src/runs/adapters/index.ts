// The adapter registry: providerType → adapter. Adding an adapter is one import and one line here.
import type { Adapter } from './adapter.js'
import { customWebhook } from './custom-webhook.js'
import { customTokenOnly } from './custom-token-only.js'
import { claudeAdapter } from './claude.js'
import { mistralAdapter } from './mistral.js'
import { elevenLabsAdapter } from './elevenlabs.js'
import { copilotStudioAdapter } from './copilot-studio.js'
import { cursorAdapter } from './cursor.js'

const adapters: Record<string, Adapter> = {
  custom_webhook: customWebhook,
  custom_token_only: customTokenOnly,
  claude: claudeAdapter,
  mistral: mistralAdapter,
  elevenlabs: elevenLabsAdapter,
  copilot_studio: copilotStudioAdapter,
  cursor: cursorAdapter,
}

export function adapterFor(providerType: string): Adapter | undefined {
  return Object.hasOwn(adapters, providerType) ? adapters[providerType] : undefined
}
