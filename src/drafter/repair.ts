// A model's answer passes through here: it is repaired where it safely can be — unknown agents become the nil
// UUID, kept phases keep their ids, bad or duplicate ids are replaced — else rejected. Lengths, caps and the
// compiled cycle check are then the finishing step's (finish.ts), as for every engine.
import { NIL_UUID } from '../http/schemas.js'
import { newId } from '../ids.js'
import { MAX_OPERATORS, MAX_PHASES, type Change, type Phase, type Warning } from '../cycles/schemas.js'
import type { DraftOutcome, DraftRequest } from './types.js'

const UUID = /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}|0{8}-0{4}-0{4}-0{4}-0{12}|f{8}-f{4}-f{4}-f{4}-f{12})$/i

export class UnusableDraftError extends Error {
  constructor(detail: string) {
    super(detail)
    this.name = 'UnusableDraftError'
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)
const text = (value: unknown, fallback: string) => (typeof value === 'string' ? value : typeof value === 'number' ? String(value) : fallback)

function repairPhase(raw: unknown, index: number, request: DraftRequest, usedIds: Set<string>, warnings: Warning[]): Phase {
  if (!isObject(raw)) throw new UnusableDraftError(`phase ${index + 1} is not an object`)
  const phaseName = text(raw.phaseName, '').trim()
  const instructions = text(raw.instructions, '')
  if (!phaseName && !instructions) throw new UnusableDraftError(`phase ${index + 1} has neither a name nor instructions`)
  let id = typeof raw.id === 'string' && UUID.test(raw.id) ? raw.id.toLowerCase() : ''
  if (!id || usedIds.has(id) || id === NIL_UUID) id = newId()
  usedIds.add(id)
  const knownAgents = new Set(request.agents.map((a) => a.id))
  let agentId = typeof raw.agentId === 'string' ? raw.agentId.toLowerCase() : NIL_UUID
  if (agentId !== NIL_UUID && !knownAgents.has(agentId)) {
    warnings.push({ code: 'unknown-agent', detail: `Phase "${phaseName}" named an agent that is not in this workspace; it is left unassigned.`, phaseId: id })
    agentId = NIL_UUID
  }
  if (agentId === NIL_UUID && !warnings.some((w) => w.phaseId === id)) {
    warnings.push({ code: 'no-agent', detail: `No agent is assigned to the phase "${phaseName}".`, phaseId: id })
  }
  const pool = Array.isArray(raw.operatorPool) ? raw.operatorPool.filter((h): h is string => typeof h === 'string').map((h) => h.replace(/^@/, '')) : []
  return {
    id,
    agentId,
    goal: text(raw.goal, phaseName),
    instructions,
    autoAdvance: typeof raw.autoAdvance === 'boolean' ? raw.autoAdvance : pool.length === 0,
    phaseName: phaseName || instructions.slice(0, 60),
    operatorPool: [...new Set(pool)].slice(0, MAX_OPERATORS),
  }
}

const PHASE_FIELDS = ['id', 'agentId', 'goal', 'instructions', 'autoAdvance', 'phaseName', 'operatorPool'] as const

function samePhase(a: Phase, b: Phase): boolean {
  return PHASE_FIELDS.every((field) => JSON.stringify(a[field]) === JSON.stringify(b[field]))
}

/** In refine mode a phase that keeps its name keeps its id, and a phase that is unchanged is the current one exactly. */
function keepCurrentPhases(phases: Phase[], request: DraftRequest): Phase[] {
  const current = request.current?.phasesTemplate ?? []
  const byId = new Map(current.map((p) => [p.id.toLowerCase(), p]))
  const byName = new Map(current.map((p) => [p.phaseName.toLowerCase(), p]))
  const claimed = new Set<string>()
  return phases.map((phase) => {
    const original = byId.get(phase.id) ?? (claimed.has(phase.id) ? undefined : byName.get(phase.phaseName.toLowerCase()))
    if (!original || claimed.has(original.id)) return phase
    claimed.add(original.id)
    const kept = { ...phase, id: original.id }
    return samePhase(kept, original) ? original : kept
  })
}

function diff(request: DraftRequest, phases: Phase[]): Change[] {
  const before = request.current?.phasesTemplate ?? []
  const beforeIds = before.map((p) => p.id)
  const afterIds = new Set(phases.map((p) => p.id))
  const changes: Change[] = before.filter((p) => !afterIds.has(p.id)).map((p) => ({ op: 'remove', phaseId: p.id, detail: `removed "${p.phaseName}"` }))
  const kept = beforeIds.filter((id) => afterIds.has(id))
  let keptIndex = 0
  for (const phase of phases) {
    const original = before.find((p) => p.id === phase.id)
    if (!original) {
      changes.push({ op: 'add', phaseId: phase.id, detail: `added "${phase.phaseName}"` })
      continue
    }
    if (kept[keptIndex++] !== phase.id) changes.push({ op: 'move', phaseId: phase.id, detail: 'moved' })
    else if (!samePhase(original, phase)) changes.push({ op: 'update', phaseId: phase.id, detail: `updated "${phase.phaseName}"` })
  }
  return changes
}

/** Validates and repairs a model's answer (any JSON); throws UnusableDraftError when it cannot be repaired. */
export function repairDraft(candidate: unknown, request: DraftRequest): DraftOutcome {
  if (!isObject(candidate)) throw new UnusableDraftError('the answer is not an object')
  const rawPhases = candidate.phasesTemplate
  if (!Array.isArray(rawPhases)) throw new UnusableDraftError('the answer has no phasesTemplate array')
  if (rawPhases.length > MAX_PHASES) throw new UnusableDraftError(`the answer has ${rawPhases.length} phases; at most ${MAX_PHASES} are allowed`)
  const warnings: Warning[] = []
  const usedIds = new Set<string>()
  const phases = keepCurrentPhases(rawPhases.map((raw, index) => repairPhase(raw, index, request, usedIds, warnings)), request)
  // Lengths and the compiled cycle check are the finishing step's (finish.ts), as for every engine.
  const draft = {
    triggerName: text(candidate.triggerName, request.current?.triggerName ?? 'manual').trim() || 'manual',
    description: text(candidate.description, request.current?.description ?? ''),
    phasesTemplate: phases,
  }
  return { draft, changes: diff(request, phases), warnings }
}
