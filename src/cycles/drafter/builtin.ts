// The builtin engine: deterministic, offline, no I/O.
import { newId } from '../../ids.js'
import { AgentIndex } from './assign.js'
import { generateCycle } from './generate.js'
import { refineCycle } from './refine.js'
import type { Drafter, DraftRequest } from './types.js'
import { fitToBounds } from './bounds.js'

export function draftBuiltin(request: DraftRequest, makeId: () => string = newId) {
  const context = { agents: new AgentIndex(request.agents), newId: makeId }
  const outcome = request.mode === 'refine' && request.current ? refineCycle(request.prompt, request.current, context) : generateCycle(request.prompt, context)
  return { ...outcome, draft: fitToBounds(outcome.draft) }
}

export const builtinDrafter: Drafter = {
  name: 'builtin',
  draft: async (request) => draftBuiltin(request),
}
