// A saved cycle's A2A exposure (docs/a2a.md): `{ exposed, skill }`, the skill's fields optional (the card fills
// them from the cycle), with their bounds; and the shapes of the API routes around it.
import Type, { type Static } from 'typebox'
import { Uuid } from '../http/schemas.js'

export const MAX_SKILL_TAGS = 20
export const MAX_SKILL_EXAMPLES = 10

export const A2aSkill = Type.Object(
  {
    id: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9._-]{1,64}$', description: 'default: the cycle id' })),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 120, description: 'default: the cycle\'s triggerName' })),
    description: Type.Optional(Type.String({ maxLength: 2000, description: 'default: the cycle\'s description' })),
    tags: Type.Optional(Type.Array(Type.String({ maxLength: 50 }), { maxItems: MAX_SKILL_TAGS })),
    examples: Type.Optional(Type.Array(Type.String({ maxLength: 500 }), { maxItems: MAX_SKILL_EXAMPLES })),
  },
  { additionalProperties: false, title: 'A2aSkill' },
)

export const CycleA2a = Type.Object(
  {
    exposed: Type.Boolean({ description: 'the cycle answers A2A calls and has a public Agent Card' }),
    skill: Type.Optional(A2aSkill),
  },
  { additionalProperties: false, title: 'CycleA2a', description: 'the cycle as an A2A agent (docs/a2a.md)' },
)
export type CycleA2a = Static<typeof CycleA2a>

/** On a saved cycle: null when it never had one. A union, so that the named shape CycleA2a stays one shape. */
export const CycleA2aOrNull = Type.Union([CycleA2a, Type.Null()])

export const PatchCycleBody = Type.Object({ a2a: CycleA2aOrNull }, { additionalProperties: false, title: 'PatchCycle' })

export const A2aAgent = Type.Object(
  { cycleId: Uuid, streamId: Uuid, name: Type.String(), cardUrl: Type.String() },
  { title: 'A2aAgent', description: 'an exposed cycle of the workspace' },
)
export type A2aAgent = Static<typeof A2aAgent>
