// Chooses the drafting engine from TANDEM_DRAFTER.
import type { Config } from '../config.js'
import { createBuiltinDrafter } from './builtin.js'
import { createModelDrafter } from './model.js'
import type { Drafter } from './types.js'

export function createDrafter(config: Config, env: NodeJS.ProcessEnv = process.env): Drafter {
  if (config.drafter.kind === 'builtin') return createBuiltinDrafter()
  return createModelDrafter(config.drafter, { timeoutMs: config.drafterTimeoutMs, env })
}
