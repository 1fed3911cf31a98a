// Which agent does a step? One named in the step (CONVENTIONS.md, Generate 3), else the agent whose
// name, tools and instructions best match the step's words, stemmed, above a threshold.
import { distance } from 'fastest-levenshtein'
import { MAX_INDEXED_INSTRUCTIONS, MAX_INDEXED_TOOL, MAX_INDEXED_TOOLS } from '../text/agent-text.js'
import { agentiveStems, contentStems, MAX_REFERENCE_LENGTH, words, workStems } from '../text/language.js'

export interface AgentProfile {
  id: string
  name: string
  instructions: string | null
  tools: string[]
}

// A word found in an agent's name says more than one in its tools, which says more than its instructions.
const NAME_WEIGHT = 3
const TOOL_WEIGHT = 2
const INSTRUCTION_WEIGHT = 1
// The step's own verb says what work it is: its match counts double.
export const VERB_FACTOR = 2
/** Below this a match is a coincidence of one common word: no agent fits. */
export const MATCH_THRESHOLD = 2

interface IndexedAgent {
  agent: AgentProfile
  nameWords: string[]
  weights: Map<string, number>
}

export interface Match {
  agent: AgentProfile | null
  score: number
}

// Indexing an agent's words costs far more than drafting with them: keep indexed agents across drafts,
// in a cache bounded by the size of the text it holds (least recently used first out), from which an
// agent is dropped when it is changed or deleted (agent-changes.ts).
const INDEX_CACHE_CHARACTERS = 4_000_000
const indexed = new Map<string, { entry: IndexedAgent; weight: number }>()
let cachedCharacters = 0

const sameWords = (a: AgentProfile, b: AgentProfile) =>
  a.name === b.name && a.instructions === b.instructions && a.tools.length === b.tools.length && a.tools.every((t, i) => t === b.tools[i])

const weightOf = (agent: AgentProfile) => agent.name.length + (agent.instructions?.length ?? 0) + agent.tools.reduce((sum, t) => sum + t.length, 0) + 64

/** How many agents the cache holds and the characters they weigh (for tests and diagnostics). */
export const indexCacheStats = () => ({ agents: indexed.size, characters: cachedCharacters, limit: INDEX_CACHE_CHARACTERS })

/** Drops an agent from the cache (it was changed or deleted). */
export function forgetAgent(id: string): void {
  const cached = indexed.get(id)
  if (!cached) return
  cachedCharacters -= cached.weight
  indexed.delete(id)
}

function indexAgent(agent: AgentProfile): IndexedAgent {
  const cached = indexed.get(agent.id)
  if (cached && sameWords(cached.entry.agent, agent)) {
    indexed.delete(agent.id)
    indexed.set(agent.id, cached)
    return cached.entry
  }
  forgetAgent(agent.id)
  const weights = new Map<string, number>()
  const note = (stems: string[], weight: number) => {
    for (const s of stems) weights.set(s, Math.max(weights.get(s) ?? 0, weight))
  }
  note(contentStems((agent.instructions ?? '').slice(0, MAX_INDEXED_INSTRUCTIONS)), INSTRUCTION_WEIGHT)
  note(contentStems(agent.tools.slice(0, MAX_INDEXED_TOOLS).map((t) => t.slice(0, MAX_INDEXED_TOOL)).join(' ')), TOOL_WEIGHT)
  note(contentStems(agent.name), NAME_WEIGHT)
  // An agent known only by its name ("Contract Negotiator") does what its agentive nouns say.
  if (!agent.instructions && agent.tools.length === 0) note(agentiveStems(agent.name), NAME_WEIGHT)
  const entry = { agent, nameWords: words(agent.name), weights }
  const weight = weightOf(agent)
  while (cachedCharacters + weight > INDEX_CACHE_CHARACTERS && indexed.size > 0) forgetAgent(indexed.keys().next().value as string)
  indexed.set(agent.id, { entry, weight })
  cachedCharacters += weight
  return entry
}

export class AgentIndex {
  private readonly agents: IndexedAgent[]
  /** Agents by the first word of their name, for finding names in a step in one pass. */
  private readonly byFirstWord = new Map<string, IndexedAgent[]>()
  /** Per stem, the agents (by position) whose words hold it, with its weight: a step's score reads only these. */
  private readonly postings = new Map<string, Array<{ at: number; weight: number }>>()

  constructor(agents: readonly AgentProfile[]) {
    this.agents = agents.map(indexAgent)
    this.agents.forEach((indexed, at) => {
      for (const [stem, weight] of indexed.weights) {
        const list = this.postings.get(stem)
        if (list) list.push({ at, weight })
        else this.postings.set(stem, [{ at, weight }])
      }
    })
    for (const indexed of this.agents) {
      const first = indexed.nameWords[0]
      if (first === undefined) continue
      const list = this.byFirstWord.get(first) ?? []
      list.push(indexed)
      this.byFirstWord.set(first, list)
    }
  }

  private lowerCaseNames: readonly string[] | null = null

  /** Agents' names in lower case, for telling an actor from an object (made once: an index does not change). */
  names(): readonly string[] {
    return (this.lowerCaseNames ??= Object.freeze(this.agents.map((a) => a.nameWords.join(' '))))
  }

  /** The agent a text (or its lower-case words) names first (whole words, any case, possessive allowed); longer names win at one position. */
  named(text: string | string[]): { agent: AgentProfile; index: number; length: number } | null {
    const ws = typeof text === 'string' ? words(text) : text
    for (let i = 0; i < ws.length; i++) {
      let best: { agent: AgentProfile; index: number; length: number } | null = null
      for (const { agent, nameWords } of this.byFirstWord.get(ws[i] as string) ?? []) {
        if (nameWords.every((w, k) => ws[i + k] === w) && (!best || nameWords.length > best.length)) best = { agent, index: i, length: nameWords.length }
      }
      if (best) return best
    }
    return null
  }

  /** The agent whose name is closest to a reference ("Copywriter", "the copy writer"), for refine. */
  closestByName(reference: string): AgentProfile | null {
    const wanted = words(reference).filter((w) => w !== 'the' && w !== 'agent').join(' ')
    if (!wanted || wanted.length > MAX_REFERENCE_LENGTH) return null
    let best: { agent: AgentProfile; similarity: number } | null = null
    for (const { agent, nameWords } of this.agents) {
      const name = nameWords.join(' ')
      const similarity = 1 - distance(name, wanted) / Math.max(name.length, wanted.length)
      if (!best || similarity > best.similarity) best = { agent, similarity }
    }
    return best && best.similarity >= 0.75 ? best.agent : null
  }

  /** The best-matching agent for a step's work (its text, or its lower-case words), or null below the threshold. */
  bestMatch(step: string | string[]): Match {
    const ws = (typeof step === 'string' ? words(step) : step).filter((w) => !w.startsWith('@'))
    // Each agent's score is the sum over the step's stems, in their order, of weight × factor, as if every agent's
    // weights were read for every stem (a missing stem adds 0); the first agent with the highest score wins.
    const scores = new Float64Array(this.agents.length)
    for (const [s, factor] of workStems(ws, VERB_FACTOR)) {
      for (const { at, weight } of this.postings.get(s) ?? []) scores[at]! += weight * factor
    }
    let best: Match = { agent: null, score: 0 }
    for (let at = 0; at < scores.length; at++) {
      if (scores[at]! > best.score) best = { agent: this.agents[at]!.agent, score: scores[at]! }
    }
    return best.score >= MATCH_THRESHOLD ? best : { agent: null, score: best.score }
  }
}
