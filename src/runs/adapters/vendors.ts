// The five vendor adapters (issue 12), for the run engine's adapter registry.
import type { Adapter } from './adapter.js'
import { claudeAdapter } from './claude.js'
import { copilotStudioAdapter } from './copilot-studio.js'
import { cursorAdapter } from './cursor.js'
import { elevenLabsAdapter } from './elevenlabs.js'
import { mistralAdapter } from './mistral.js'

export const vendorAdapters: readonly Adapter[] = [claudeAdapter, mistralAdapter, elevenLabsAdapter, copilotStudioAdapter, cursorAdapter]
