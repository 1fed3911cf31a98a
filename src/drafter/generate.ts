// Generate mode of the builtin engine: a prompt → a new cycle (CONVENTIONS.md, Generate 1–5).
import { NIL_UUID } from '../http/schemas.js'
import { MAX_OPERATORS, MAX_PHASES, type Change, type CycleDefinition, type Phase, type Warning } from '../cycles/schemas.js'
import type { AgentIndex } from './assign.js'
import { baseVerb, capitalise, collapseSpaces, DETERMINERS, handles, isPronoun, isVerb, objectPhrase, objectSpan, pastParticiple, shownTokens, tokens, words } from '../text/language.js'
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

const DELEGATION = new Set(['have', 'let', 'ask', 'get', 'tell'])
const SUBJECT_DETERMINERS = new Set(['the', 'our', 'your', 'their', 'a', 'an', 'my'])
const capitalised = (word: string | undefined) => /^\p{Lu}/u.test(word ?? '')
/** "finds", "drafts": a verb as a subject's (third person) — not "support" in "support ticket". */
const thirdPerson = (word: string | undefined) => word !== undefined && /^\p{Ll}+s$/u.test(word) && isVerb(word)

/**
 * Where the work of a step begins, after its actor: "have Editor proofread X", "the Researcher finds X",
 * "Analyst pulls X", "Dr. Smith reviews X" → the verb. `agent`: the actor is the step's agent (its name is
 * not part of the step's instructions then).
 */
function actionStart(stepTokens: string[], named: Named): { start: number; agent: boolean } {
  let i = DELEGATION.has(stepTokens[0]?.toLowerCase() ?? '') ? 1 : 0
  if (named && (named.index === i || (named.index === i + 1 && SUBJECT_DETERMINERS.has(stepTokens[i]?.toLowerCase() ?? '')))) {
    let start = named.index + named.length
    while (stepTokens[start]?.startsWith('@')) start++
    if (stepTokens[start]?.toLowerCase() === 'to') start++
    return { start, agent: true }
  }
  while (stepTokens[i]?.startsWith('@')) i++
  if (stepTokens[i]?.toLowerCase() === 'to') i++
  if (isVerb(stepTokens[i])) return { start: i, agent: false }
  // A person or role who is not the step's agent ("Dr. Smith reviews …", "the writer drafts …"): the words
  // before the verb are the actor, not the work.
  const from = SUBJECT_DETERMINERS.has(stepTokens[i]?.toLowerCase() ?? '') ? i + 1 : i
  for (let k = from + 1; k < Math.min(stepTokens.length, from + 4); k++) {
    const subject = stepTokens.slice(from, k)
    if (subject.every(capitalised) && isVerb(stepTokens[k]) && /^\p{Ll}/u.test(stepTokens[k] as string)) return { start: k, agent: false }
    if (from > i && thirdPerson(stepTokens[k]) && subject.every((w) => !isVerb(w))) return { start: k, agent: false }
    if (!capitalised(stepTokens[k]) && from === i) break
  }
  return { start: i, agent: false }
}

type Named = ReturnType<AgentIndex['named']>

/** What a pronoun object ("triage it", "proofread them") stands for: the work before, or what the trigger names. */
export type Antecedent = string[]

const PARTICLES = new Set(['up', 'out', 'down', 'off', 'over', 'together', 'back'])
// Replying has no object that is done: its outcome is the reply ("Reply sent to customer").
const REPLYING = new Set(['reply', 'respond'])
const COMPLEMENT = new Set(['into', 'to'])

/** The outcome of a step: its object and the verb's past participle ("Sources found"), never "… done", never the actor. */
function goalOf(action: string[], shown: string[], phaseName: string, antecedent: Antecedent | undefined): string {
  if (!isVerb(action[0])) {
    // "Sales numbers pulled" already says its outcome; "QA" is an activity: "QA complete".
    const last = phaseName.split(' ').at(-1) ?? ''
    return /^\p{Ll}+(?:ed|en)$/u.test(last) && isVerb(last) ? phaseName : `${phaseName} complete`
  }
  const verb = baseVerb(action[0] as string)
  let rest = action.slice(1)
  let seen = shown.slice(1)
  let particle = ''
  if (PARTICLES.has(rest[0]?.toLowerCase() ?? '') && !isPronoun(rest[1])) {
    particle = ` ${(rest[0] as string).toLowerCase()}`
    rest = rest.slice(1)
    seen = seen.slice(1)
  }
  const participle = pastParticiple(verb)
  if (REPLYING.has(verb) || (verb === 'answer' && rest[0]?.toLowerCase() === 'to')) {
    const to = rest.findIndex((w) => w.toLowerCase() === 'to')
    const recipient = to === -1 ? [] : objectPhrase(rest.slice(to + 1), 3)
    return recipient.length > 0 ? `Reply sent to ${recipient.join(' ')}` : 'Reply sent'
  }
  const span = objectSpan(rest, seen)
  const end = span.end
  let object = span.words
  const pronoun = rest[0] !== undefined && isPronoun(rest[0]) && !POSSESSIVES.has(rest[0].toLowerCase())
  if (pronoun && antecedent && antecedent.length > 0) object = antecedent
  if (object.length > 0) {
    let complement = ''
    const preposition = rest[end]?.toLowerCase() ?? ''
    if (COMPLEMENT.has(preposition) && !(preposition === 'to' && isVerb(rest[end + 1]))) {
      const target = objectSpan(rest.slice(end + 1), seen.slice(end + 1), 3).words
      if (target.length > 0) complement = ` ${preposition} ${target.join(' ')}`
    }
    return `${capitalise(object.join(' '))} ${participle}${particle}${complement}`
  }
  const at = rest.findIndex((w) => !isPronoun(w))
  const preposition = rest[at]?.toLowerCase() ?? ''
  const indirect = PREPOSITION_OBJECT.has(preposition) ? objectPhrase(rest.slice(at + 1), 3) : []
  return capitalise(`${participle}${particle}${indirect.length > 0 ? ` ${preposition} ${indirect.join(' ')}` : ''}`)
}

const POSSESSIVES = new Set(['its', 'their', 'his', 'her', 'our', 'your', 'my'])

function namePhase(ws: string[]): string {
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
    return capitalise([verb, ...object].join(' ')).slice(0, MAX_PHASE_NAME).trim()
  }
  const object = objectPhrase(ws)
  return capitalise((object.length > 0 ? object : ws.slice(0, 4)).join(' ') || 'Step').slice(0, MAX_PHASE_NAME).trim()
}

/**
 * The step's own words from its work on ("The Researcher finds sources" → "Find sources."): the actor dropped
 * when it is the step's agent, and then its verbs in the base form ("… and builds a chart" → "… and build a chart").
 */
function instructionsOf(step: string, at: number, agentDropped: boolean): string {
  const leading = /^[\p{L}-]+/u.exec(step.trimStart())?.[0] ?? ''
  // "Translating the ticket" (from "Start by translating the ticket"), "Checks the links": the base form too.
  if ((!agentDropped || at === 0) && !(/^\p{L}+(?:ing|s)$/u.test(leading) && isVerb(leading) && baseVerb(leading) !== leading.toLowerCase())) return sentence(step)
  const text = agentDropped ? step.slice(at) : step.trimStart()
  const first = /^[\p{L}-]+/u.exec(text)?.[0] ?? ''
  const base = isVerb(first) ? baseVerb(first) : first
  const rest = text.slice(first.length).replace(/\b(and|then|,)\s+(\p{Ll}+s)\b/gu, (whole, joint: string, word: string) => (thirdPerson(word) ? `${joint} ${baseVerb(word)}` : whole))
  return sentence(`${base}${rest}`)
}

const sentence = (text: string) => {
  const trimmed = capitalise(text.trim())
  return /[.!?]$/.test(trimmed) ? trimmed : `${trimmed}.`
}

/** The object a phase's name gives its work ("Write newsletter" → newsletter), for a pronoun in the step after it. */
export function antecedentOf(phase: Phase | undefined): Antecedent | undefined {
  if (!phase) return undefined
  const ws = tokens(phase.phaseName)
  return isVerb(ws[0]) ? objectPhrase(ws.slice(1)).map((w) => w.toLowerCase()) : undefined
}

/** What a trigger names ("a customer reports a bug" → bug; "a support ticket arrives" → support ticket), for "triage it". */
export function triggerAntecedent(trigger: Trigger | null): Antecedent | undefined {
  if (!trigger) return undefined
  const ws = tokens(trigger.phrase)
  const verbAt = ws.findIndex((w, i) => i > 0 && (thirdPerson(w) || (/ed$/.test(w) && isVerb(w))))
  if (verbAt === -1) return undefined
  const object = objectPhrase(ws.slice(verbAt + 1))
  if (object.length > 0 && !PREPOSITION_OBJECT.has(ws[verbAt + 1]?.toLowerCase() ?? '')) return object
  return ws.slice(0, verbAt).filter((w) => !DETERMINERS.has(w.toLowerCase()) && !AUXILIARIES.has(w.toLowerCase()))
}

const AUXILIARIES = new Set(['is', 'are', 'was', 'were', 'gets', 'got', 'has', 'have', 'been', 'be'])

/** One phase from one step of work, with its agent, operators and gate; `antecedent` is what "it" in the step is. */
export function buildPhase(step: string, context: DraftContext, warnings: Warning[], antecedent?: Antecedent): Phase {
  const shown = shownTokens(step)
  const stepTokens = tokens(step)
  const stepWords = stepTokens.map((w) => w.toLowerCase())
  const named = context.agents.named(stepWords)
  const agent = named ? named.agent : context.agents.bestMatch(stepWords).agent
  const operators = step.includes('@') ? capOperators(handles(step), warnings) : []
  const { start, agent: agentIsActor } = actionStart(stepTokens, named)
  const action = stepTokens.slice(start)
  const phaseName = namePhase(action.filter((w) => !w.startsWith('@')))
  const phase: Phase = {
    id: context.newId(),
    agentId: agent ? agent.id : NIL_UUID,
    goal: goalOf(action, shown.slice(start).map((t) => t.word), phaseName, antecedent).slice(0, 200),
    instructions: instructionsOf(step, shown[start]?.at ?? 0, agentIsActor),
    autoAdvance: operators.length === 0 && !GATE_WORDS.test(step),
    phaseName,
    operatorPool: operators,
  }
  if (!agent) {
    warnings.push({ code: 'no-agent', detail: `No agent of the workspace fits the phase "${phaseName}"; it is left unassigned (nil agentId).`, phaseId: phase.id })
  }
  return phase
}

// "hand them to the Writer", "pass the notes on to Editor": what a step hands on, said as a step of its own.
const HAND_ON = /^(?:hand|pass|forward|give|send)(?:s|es|ed)?\s+(?:[^,;]{0,60}?\s+)?(?:over\s+|on\s+|off\s+)?to\s+((?:the\s+)?.+)$/i

/** A step that only hands the work on to another agent: it belongs to the instructions of the phase before it. */
function handsOn(step: string, context: DraftContext): boolean {
  const match = HAND_ON.exec(step.trim())
  if (!match) return false
  const recipient = words((match[1] as string).replace(/^the\s+/i, ''))
  const named = context.agents.named(recipient)
  return named !== null && named.index === 0 && named.length === recipient.length
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
    if (previous && handsOn(step, context)) {
      const [verb = ''] = step.trim().split(/\s/, 1)
      previous.instructions = `${previous.instructions} ${sentence(`${baseVerb(verb)}${step.trim().slice(verb.length)}`)}`
      continue
    }
    if (isOperatorStep(step) && previous) {
      gatePhase(previous, step, warnings)
      continue
    }
    if (phases.length === MAX_PHASES) {
      warnings.push({ code: 'too-many-steps', detail: `The prompt has more steps than a cycle may hold; only the first ${MAX_PHASES} became phases.` })
      break
    }
    const phase = buildPhase(step, context, warnings, antecedentOf(previous) ?? triggerAntecedent(trigger))
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
