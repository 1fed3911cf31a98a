// The one finishing step every draft goes through, whichever engine made it, before it reaches a client:
// caps (phases, operators per phase, text lengths), ids made unique, and the compiled CycleDefinition
// check. So a 200 from `/draft` is always a body that `POST …/cycles` accepts (agents aside: a phase of
// `current` that names an agent of another workspace stays as the client sent it).
import type { ValidateFunction } from 'ajv'
import { compileBodyValidator } from '../http/validation.js'
import { newId } from '../ids.js'
import { CycleDefinition, MAX_OPERATORS, MAX_PHASES, type Phase, type Warning } from '../cycles/schemas.js'
import type { DraftOutcome } from './types.js'

// Compiled at the first draft, not at start-up.
let cycleValidator: ValidateFunction | undefined
const checkCycle = (draft: unknown) => (cycleValidator ??= compileBodyValidator(CycleDefinition))(draft)

/** The maxLength a schema gives a string field, if any (the bounds live in schemas.ts only). */
function maxLengthOf(schema: unknown): number {
  const limit = (schema as { maxLength?: unknown }).maxLength
  return typeof limit === 'number' ? limit : Number.POSITIVE_INFINITY
}

const PHASE_FIELDS = CycleDefinition.properties.phasesTemplate.items.properties
const LIMITS = {
  triggerName: maxLengthOf(CycleDefinition.properties.triggerName),
  description: maxLengthOf(CycleDefinition.properties.description),
  phaseName: maxLengthOf(PHASE_FIELDS.phaseName),
  goal: maxLengthOf(PHASE_FIELDS.goal),
  instructions: maxLengthOf(PHASE_FIELDS.instructions),
  handle: maxLengthOf(PHASE_FIELDS.operatorPool.items),
}

/** The text, or its first `limit` − 1 code points and "…" when it has more (limits count code points). */
function cut(text: string, limit: number): string {
  if (text.length <= limit) return text
  const points = Array.from(text)
  return points.length <= limit ? text : `${points.slice(0, limit - 1).join('')}…`
}

export class UnfinishableDraftError extends Error {
  constructor(detail: string) {
    super(detail)
    this.name = 'UnfinishableDraftError'
  }
}

/** Brings a draft within every bound of a saved cycle, with a warning for each thing it had to cut. */
export function finishDraft(outcome: DraftOutcome): DraftOutcome {
  const warnings: Warning[] = [...outcome.warnings]
  let phases = outcome.draft.phasesTemplate
  let changes = outcome.changes
  if (phases.length > MAX_PHASES) {
    const dropped = new Set(phases.slice(MAX_PHASES).map((p) => p.id))
    warnings.push({ code: 'too-many-steps', detail: `A cycle holds at most ${MAX_PHASES} phases; the draft had ${phases.length}, the last ${phases.length - MAX_PHASES} were left out.` })
    phases = phases.slice(0, MAX_PHASES)
    changes = changes.filter((c) => !(c.op === 'add' && dropped.has(c.phaseId)))
  }
  const seen = new Set<string>()
  const finished = phases.map((phase): Phase => {
    let result = phase
    const pool = [...new Set(phase.operatorPool.map((h) => cut(h, LIMITS.handle)))]
    if (pool.length > MAX_OPERATORS) {
      warnings.push({ code: 'too-many-operators', detail: `A phase has at most ${MAX_OPERATORS} operators; "${cut(phase.phaseName, 60)}" named ${pool.length}, only the first ${MAX_OPERATORS} were kept.`, phaseId: phase.id })
    }
    if (pool.length !== phase.operatorPool.length || pool.some((h, i) => h !== phase.operatorPool[i])) result = { ...result, operatorPool: pool.slice(0, MAX_OPERATORS) }
    for (const field of ['phaseName', 'goal', 'instructions'] as const) {
      const shortened = cut(result[field], LIMITS[field])
      if (shortened !== result[field]) {
        result = { ...result, [field]: shortened }
        warnings.push({ code: 'text-shortened', detail: `The ${field} of a phase was longer than ${LIMITS[field]} characters and was shortened.`, phaseId: phase.id })
      }
    }
    if (seen.has(result.id.toLowerCase())) {
      const id = newId()
      warnings.push({ code: 'repeated-id', detail: `Two phases had the id ${result.id}; the later one has a new id.`, phaseId: id })
      result = { ...result, id }
    }
    seen.add(result.id.toLowerCase())
    return result
  })
  const draft = {
    triggerName: cut(outcome.draft.triggerName, LIMITS.triggerName),
    description: cut(outcome.draft.description, LIMITS.description),
    phasesTemplate: finished,
  }
  if (draft.triggerName !== outcome.draft.triggerName) warnings.push({ code: 'text-shortened', detail: `The trigger name was longer than ${LIMITS.triggerName} characters and was shortened.` })
  if (draft.description !== outcome.draft.description) warnings.push({ code: 'text-shortened', detail: `The description was longer than ${LIMITS.description} characters and was shortened.` })
  if (!checkCycle(draft)) {
    const first = cycleValidator?.errors?.[0]
    throw new UnfinishableDraftError(`the draft breaks the cycle schema${first ? ` at ${first.instancePath || '/'} (${first.message})` : ''}`)
  }
  return { draft, changes, warnings }
}
