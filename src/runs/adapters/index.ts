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

const adapters: Record<string, Adapter> = Object.fromEntries(
  [customWebhook, customTokenOnly, claudeAdapter, mistralAdapter, elevenLabsAdapter, copilotStudioAdapter, cursorAdapter].map((adapter) => [adapter.providerType, withAuthMode(adapter)]),
)

export function adapterFor(providerType: string): Adapter | undefined {
  return Object.hasOwn(adapters, providerType) ? adapters[providerType] : undefined
}
