// The builtin engine: deterministic, offline, no I/O.
import { newId } from '../../ids.js'
import { AgentIndex } from './assign.js'
import { generateCycle } from './generate.js'
import { refineCycle } from './refine.js'
import type { Drafter, DraftRequest } from './types.js'

export function draftBuiltin(request: DraftRequest, makeId: () => string = newId) {
  const context = { agents: new AgentIndex(request.agents), newId: makeId }
  if (request.mode === 'refine' && request.current) return refineCycle(request.prompt, request.current, context)
  return generateCycle(request.prompt, context)
}

export const builtinDrafter: Drafter = {
  name: 'builtin',
  draft: async (request) => draftBuiltin(request),
}
