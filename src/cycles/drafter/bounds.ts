// A draft must fit the bounds of the cycle it may be saved as (and sent back as `current`): text drawn from a
// 100 000-character prompt, or a model's answer, is cut to each field's limit, ending in "…".
import { MAX_DESCRIPTION_LENGTH, MAX_GOAL_LENGTH, MAX_INSTRUCTIONS_LENGTH, MAX_NAME_LENGTH, type CycleDefinition, type Phase } from '../schemas.js'

/** The text, or its first `max` − 1 code points and "…" when it has more than `max` (never splits a pair). */
export function clampText(text: string, max: number): string {
  if (text.length <= max) return text
  const points = Array.from(text)
  return points.length <= max ? text : `${points.slice(0, max - 1).join('')}…`
}

function fitPhase(phase: Phase): Phase {
  const fitted = {
    ...phase,
    goal: clampText(phase.goal, MAX_GOAL_LENGTH),
    instructions: clampText(phase.instructions, MAX_INSTRUCTIONS_LENGTH),
    phaseName: clampText(phase.phaseName, MAX_NAME_LENGTH),
  }
  // A phase that already fits is returned as it is (refine keeps unchanged phases identical).
  return fitted.goal === phase.goal && fitted.instructions === phase.instructions && fitted.phaseName === phase.phaseName ? phase : fitted
}

export function fitToBounds<T extends CycleDefinition>(draft: T): T {
  return {
    ...draft,
    triggerName: clampText(draft.triggerName, MAX_NAME_LENGTH),
    description: clampText(draft.description, MAX_DESCRIPTION_LENGTH),
    phasesTemplate: draft.phasesTemplate.map(fitPhase),
  }
}
