// Generate mode of the builtin engine: a prompt → a new cycle (CONVENTIONS.md, Generate 1–5).
import { NIL_UUID } from '../http/schemas.js'
import { MAX_OPERATORS, MAX_PHASES, type Change, type CycleDefinition, type Phase, type Warning } from '../cycles/schemas.js'
import type { AgentIndex } from './assign.js'
import { baseVerb, capitalise, collapseSpaces, handles, isPronoun, isVerb, objectPhrase, pastParticiple, tokens } from '../text/language.js'
import { splitSteps, splitTrigger, type Trigger } from './steps.js'

export interface DraftOutcome {
  draft: CycleDefinition
  changes: Change[]
  warnings: Warning[]
}

export interface DraftContext {
  agents: AgentIndex
  newId: () => string
}

const MAX_PHASE_NAME = 60
const PREPOSITION_OBJECT = new Set(['to', 'with', 'for', 'on', 'about', 'into'])

// "asks for approval, sign-off, confirmation or to wait for someone"
// ("… to confirm the delivery date" is the agent's own work; "… for confirmation" asks someone.)
const GATE_WORDS = /\b(?:approv(?:e|es|ed|al|ing)|sign(?:s|ed)?[- ]?off|sign-?offs?|confirmation|wait(?:s|ing)?\s+(?:for|on|until))\b/i

// A step whose actor is an operator: "@lee reviews …", "have @maria approve …", "wait for @finance …".
const OPERATOR_ACTOR = [
  /^@/,
  /^(?:have|let|ask|get|tell)\s+@/i,
  /^wait(?:s|ing)?\s+(?:for|on|until)\b/i,
  /^(?:get|obtain|request|seek|require)\s+(?:an?\s+|the\s+)?(?:approval|sign-?off|confirmation|go-ahead)\b/i,
]

export function isOperatorStep(step: string): boolean {
  return OPERATOR_ACTOR.some((pattern) => pattern.test(step.trim()))
}

/** The words after the step's actor: "have Editor proofread X" → "proofread X"; "Analyst pulls X" → "pulls X". */
function actionWords(stepTokens: string[], named: Named): string[] {
  let ws = stepTokens
  if (['have', 'let', 'ask', 'get', 'tell'].includes(ws[0]?.toLowerCase() ?? '')) ws = ws.slice(1)
  if (named && named.index === stepTokens.length - ws.length) ws = ws.slice(named.length)
  ws = ws.filter((w) => !w.startsWith('@'))
  if (ws[0]?.toLowerCase() === 'to') ws = ws.slice(1)
  // A person who is neither an agent nor an operator ("Dr. Smith reviews …", "Prof. Lee drafts …"): the
  // capitalised words before the verb are the actor, not the work.
  if (!isVerb(ws[0]) && /^\p{Lu}/u.test(ws[0] ?? '')) {
    for (let i = 1; i < Math.min(ws.length, 4); i++) {
      if (isVerb(ws[i]) && /^\p{Ll}/u.test(ws[i] as string)) return ws.slice(i)
      if (!/^\p{Lu}/u.test(ws[i] as string)) break
    }
  }
  return ws
}

type Named = ReturnType<AgentIndex['named']>

function namePhase(stepTokens: string[], named: Named): { phaseName: string; goal: string } {
  const ws = actionWords(stepTokens, named)
  const verbAt = isVerb(ws[0]) ? 0 : -1
  if (verbAt === 0) {
    const verb = baseVerb(ws[0] as string)
    const rest = ws.slice(1)
    let object = objectPhrase(rest)
    // No direct object ("reply to the customer", "compare them with the budget"): keep the preposition and its object.
    const at = rest.findIndex((w) => !isPronoun(w))
    const preposition = rest[at]?.toLowerCase() ?? ''
    if (object.length === 0 && PREPOSITION_OBJECT.has(preposition)) {
      const indirect = objectPhrase(rest.slice(at + 1), 3)
      if (indirect.length > 0) object = [preposition, ...indirect]
    }
    const phaseName = capitalise([verb, ...object].join(' ')).slice(0, MAX_PHASE_NAME).trim()
    const direct = object.length > 0 && !PREPOSITION_OBJECT.has(object[0] as string)
    const goal = direct ? `${capitalise(object.join(' '))} ${pastParticiple(verb)}` : `${capitalise([verb, ...object].join(' '))} done`
    return { phaseName, goal }
  }
  const object = objectPhrase(ws)
  const phaseName = capitalise((object.length > 0 ? object : ws.slice(0, 4)).join(' ') || 'Step').slice(0, MAX_PHASE_NAME).trim()
  return { phaseName, goal: `${phaseName} done` }
}

const sentence = (text: string) => {
  const trimmed = capitalise(text.trim())
  return /[.!?]$/.test(trimmed) ? trimmed : `${trimmed}.`
}

/** One phase from one step of work, with its agent, operators and gate. */
export function buildPhase(step: string, context: DraftContext, warnings: Warning[]): Phase {
  const stepTokens = tokens(step)
  const stepWords = stepTokens.map((w) => w.toLowerCase())
  const named = context.agents.named(stepWords)
  const agent = named ? named.agent : context.agents.bestMatch(stepWords).agent
  const operators = step.includes('@') ? capOperators(handles(step), warnings) : []
  const { phaseName, goal } = namePhase(stepTokens, named)
  const phase: Phase = {
    id: context.newId(),
    agentId: agent ? agent.id : NIL_UUID,
    goal,
    instructions: sentence(step),
    autoAdvance: operators.length === 0 && !GATE_WORDS.test(step),
    phaseName,
    operatorPool: operators,
  }
  if (!agent) {
    warnings.push({ code: 'no-agent', detail: `No agent of the workspace fits the phase "${phaseName}"; it is left unassigned (nil agentId).`, phaseId: phase.id })
  }
  return phase
}

/** At most MAX_OPERATORS handles per phase; past that a warning says how many were left out. */
export function capOperators(pool: string[], warnings: Warning[], phaseName = 'a phase'): string[] {
  if (pool.length <= MAX_OPERATORS) return pool
  warnings.push({ code: 'too-many-operators', detail: `A phase has at most ${MAX_OPERATORS} operators; ${phaseName} was given ${pool.length}, only the first ${MAX_OPERATORS} were kept.` })
  return pool.slice(0, MAX_OPERATORS)
}

/** An operator's step gates the phase before it: its operators join that pool, and it waits. */
export function gatePhase(phase: Phase, step: string, warnings: Warning[]): void {
  const pool = new Set(phase.operatorPool)
  for (const handle of handles(step)) pool.add(handle)
  phase.operatorPool = capOperators([...pool], warnings, `"${phase.phaseName}"`)
  phase.autoAdvance = false
  phase.instructions = `${phase.instructions} ${sentence(step)}`
}

export function describeCycle(trigger: Trigger | null, phases: Phase[]): string {
  const work = phases.map((p) => p.phaseName.charAt(0).toLowerCase() + p.phaseName.slice(1))
  const list = work.length === 0 ? 'nothing to do yet' : work.join(', then ')
  return trigger ? `${capitalise(trigger.lead)} ${trigger.phrase}: ${list}.` : `${capitalise(list)}.`
}

export function generateCycle(prompt: string, context: DraftContext): DraftOutcome {
  const warnings: Warning[] = []
  const { trigger, body } = splitTrigger(collapseSpaces(prompt))
  const phases: Phase[] = []
  for (const step of splitSteps(body, context.agents.names())) {
    const previous = phases[phases.length - 1]
    if (isOperatorStep(step) && previous) {
      gatePhase(previous, step, warnings)
      continue
    }
    if (phases.length === MAX_PHASES) {
      warnings.push({ code: 'too-many-steps', detail: `The prompt has more steps than a cycle may hold; only the first ${MAX_PHASES} became phases.` })
      break
    }
    const phase = buildPhase(step, context, warnings)
    if (isOperatorStep(step)) phase.autoAdvance = false
    phases.push(phase)
  }
  if (phases.length === 0) warnings.push({ code: 'no-steps', detail: 'The prompt names no step of work; the cycle has no phases.' })
  return {
    draft: { triggerName: trigger?.name ?? 'manual', description: describeCycle(trigger, phases), phasesTemplate: phases },
    changes: phases.map((p) => ({ op: 'add' as const, phaseId: p.id, detail: `added "${p.phaseName}"` })),
    warnings,
  }
}
