// What to look a prompt's agents up by: the builtin engine drafts the prompt once without agents,
// noting every text it would match against agents — each step it would assign by best match, each step or
// reference in which it would look for an agent's name — and each text becomes one full-text query, with
// the scorer's own terms and factors (language.ts workTerms), and a look-up of the agents it names. The
// database then returns, per query, the agents the scorer will rank best for that text, and every agent the
// texts name, however many agents the workspace has and however new they are.
import type { CycleDefinition, Mode } from '../cycles/schemas.js'
import { AgentIndex, VERB_FACTOR, type Match } from './assign.js'
import { generateCycle } from './generate.js'
import { workTerms, words, type WorkTerm } from '../text/language.js'
import { refineCycle } from './refine/index.js'

export interface PlanRequest {
  mode: Mode
  prompt: string
  current?: CycleDefinition
}

/** One query: [word, factor, name only (agentive noun)] — compact, as it crosses from the worker. */
export type PlannedTerm = [string, number, boolean]

export interface SearchPlan {
  /** One per text the engine would match agents against by their words. */
  queries: PlannedTerm[][]
  /** The texts (lower-case words) in which the engine would look for an agent's name. */
  names: string[][]
}

/** An index with no agents that notes what the engine asks of it. */
class Probe extends AgentIndex {
  readonly texts = new Map<string, string[]>()
  readonly naming = new Map<string, string[]>()

  private readonly actors: string[]

  constructor(actors: string[]) {
    super([])
    this.actors = actors
  }

  private note(ws: string[], named = false): void {
    if (ws.length === 0) return
    this.texts.set(ws.join(' '), ws)
    if (named) this.naming.set(ws.join(' '), ws)
  }

  override names(): string[] {
    return this.actors
  }

  override named(text: string | string[]): null {
    this.note(typeof text === 'string' ? words(text) : text, true)
    return null
  }

  override closestByName(reference: string): null {
    this.note(words(reference), true)
    return null
  }

  override bestMatch(step: string | string[]): Match {
    this.note(typeof step === 'string' ? words(step) : step)
    return { agent: null, score: 0 }
  }
}

/** Every run of one to three words of the text: whatever an agent may be called, for splitting steps at "<agent> <verb>". */
function possibleActors(text: string): string[] {
  const ws = words(text)
  const actors = new Set<string>()
  for (let i = 0; i < ws.length; i++) {
    for (let n = 1; n <= 3 && i + n <= ws.length; n++) actors.add(ws.slice(i, i + n).join(' '))
  }
  return [...actors]
}

export function searchPlan(request: PlanRequest): SearchPlan {
  const texts = new Map<string, string[]>()
  const names = new Map<string, string[]>()
  // Steps split at "<agent> <verb>" only where such an agent exists: try with no agents and with any word an agent.
  const probes = request.mode === 'refine' && request.current ? [new Probe([])] : [new Probe([]), new Probe(possibleActors(request.prompt))]
  for (const probe of probes) {
    const context = { agents: probe, newId: () => '' }
    if (request.mode === 'refine' && request.current) refineCycle(request.prompt, request.current, context)
    else generateCycle(request.prompt, context)
    for (const [key, ws] of probe.texts) texts.set(key, ws)
    for (const [key, ws] of probe.naming) names.set(key, ws)
  }
  const queries: PlannedTerm[][] = []
  const seen = new Set<string>()
  for (const ws of texts.values()) {
    const terms = workTerms(ws, VERB_FACTOR)
    const key = terms.map(termKey).sort().join(' ')
    if (terms.length === 0 || seen.has(key)) continue
    seen.add(key)
    queries.push(terms.map((t) => [t.word, t.factor, t.nameOnly]))
  }
  return { queries, names: [...names.values()] }
}

const termKey = (t: WorkTerm) => `${t.word}:${t.factor}:${t.nameOnly ? 1 : 0}`
