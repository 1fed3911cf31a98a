// Cycle shapes (spec 2.3): phases, cycle definitions, the draft request and reply, saved cycles.
import Type, { type Static } from 'typebox'
import { StringEnum, Timestamp, Uuid } from '../http/schemas.js'
import { CyclePolicy } from './policy.js'
import { CycleA2a, CycleA2aOrNull } from '../a2a/schemas.js'

export const MAX_PROMPT_LENGTH = 100000
export const MAX_PHASES = 100
export const MAX_OPERATORS = 100
export const MAX_NAME_LENGTH = 200
export const MAX_GOAL_LENGTH = 2000
export const MAX_INSTRUCTIONS_LENGTH = 20000
export const MAX_DESCRIPTION_LENGTH = 5000

export const Phase = Type.Object(
  {
    id: Uuid,
    agentId: Uuid,
    goal: Type.String({ maxLength: MAX_GOAL_LENGTH }),
    instructions: Type.String({ maxLength: MAX_INSTRUCTIONS_LENGTH }),
    autoAdvance: Type.Boolean(),
    phaseName: Type.String({ maxLength: MAX_NAME_LENGTH }),
    operatorPool: Type.Array(Type.String(), { maxItems: MAX_OPERATORS }),
  },
  { additionalProperties: false, title: 'Phase' },
)
export type Phase = Static<typeof Phase>

export const CycleDefinition = Type.Object(
  {
    triggerName: Type.String({ maxLength: MAX_NAME_LENGTH }),
    description: Type.String({ maxLength: MAX_DESCRIPTION_LENGTH }),
    phasesTemplate: Type.Array(Phase, { maxItems: MAX_PHASES }),
  },
  { additionalProperties: false, title: 'CycleDefinition' },
)
export type CycleDefinition = Static<typeof CycleDefinition>

/** POST …/cycles: a draft's fields and, beside them, the optional decision policy (not part of a draft). */
export const SaveCycleBody = Type.Object(
  { ...CycleDefinition.properties, policy: Type.Optional(CyclePolicy), a2a: Type.Optional(CycleA2a) },
  { additionalProperties: false, title: 'SaveCycle' },
)
export type SaveCycleBody = Static<typeof SaveCycleBody>

export const MODES = {
  generate: 'generate',
  create: 'generate',
  new: 'generate',
  refine: 'refine',
  edit: 'refine',
  update: 'refine',
  revise: 'refine',
  improve: 'refine',
} as const
export type Mode = (typeof MODES)[keyof typeof MODES]

export const DraftBody = Type.Object(
  {
    mode: StringEnum(Object.keys(MODES) as Array<keyof typeof MODES>, {
      description: 'generate (synonyms: create, new) or refine (synonyms: edit, update, revise, improve)',
    }),
    prompt: Type.String({ maxLength: MAX_PROMPT_LENGTH }),
    current: Type.Optional(CycleDefinition),
  },
  { additionalProperties: false, title: 'DraftCycle' },
)
export type DraftBody = Static<typeof DraftBody>

export const Change = Type.Object({
  op: StringEnum(['add', 'remove', 'update', 'move']),
  phaseId: Uuid,
  detail: Type.String(),
}, { title: 'CycleChange' })
export type Change = Static<typeof Change>

export const Warning = Type.Object({
  code: Type.String(),
  detail: Type.String(),
  phaseId: Type.Optional(Uuid),
}, { title: 'DraftWarning' })
export type Warning = Static<typeof Warning>

export const DraftResult = Type.Object({
  mode: StringEnum(['generate', 'refine']),
  engine: Type.String({ description: 'builtin, or the model-backed engine that drafted' }),
  draft: CycleDefinition,
  changes: Type.Array(Change),
  warnings: Type.Array(Warning),
}, { title: 'CycleDraft' })
export type DraftResult = Static<typeof DraftResult>

export const SavedCycle = Type.Object({
  id: Uuid,
  streamId: Uuid,
  triggerName: Type.String(),
  description: Type.String(),
  phasesTemplate: Type.Array(Phase),
  policy: Type.Optional(CyclePolicy),
  a2a: CycleA2aOrNull,
  createdAt: Timestamp,
}, { title: 'Cycle' })
export type SavedCycle = Static<typeof SavedCycle>

/** POST …/cycles answers the saved cycle and what may stop it (an operatorPool handle no one has). */
export const SavedCycleAnswer = Type.Object({
  ...SavedCycle.properties,
  warnings: Type.Optional(Type.Array(Warning, { minItems: 1, description: 'present when an operatorPool names a handle that no principal of the workspace has (one per phase and handle, code unknown-operator), or fewer handles than the phase\'s quorum (code quorum-above-pool)' })),
}, { title: 'SavedCycleAnswer' })

export const CycleParams = Type.Object({ streamId: Uuid, cycleId: Uuid }, { additionalProperties: false })
