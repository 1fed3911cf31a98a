// What every drafting engine takes and gives.
import type { CycleDefinition, Mode } from '../cycles/schemas.js'
import type { AgentProfile } from './assign.js'
import type { DraftOutcome } from './generate.js'

export interface DraftRequest {
  mode: Mode
  prompt: string
  current?: CycleDefinition
  /** The agents of the stream's workspace. */
  agents: readonly AgentProfile[]
}

export interface Drafter {
  /** `builtin`, or `<provider>:<model>` for a model-backed engine. */
  readonly name: string
  draft(request: DraftRequest): Promise<DraftOutcome>
}

export type { DraftOutcome, AgentProfile }
