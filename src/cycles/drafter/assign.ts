// Which agent does a step? One named in the step (CONVENTIONS.md, Generate 3), else the agent whose
// name, tools and instructions best match the step's words, stemmed, above a threshold.
import { distance } from 'fastest-levenshtein'
import { contentStems, isVerb, MAX_REFERENCE_LENGTH, stemsOfWords, words } from './language.js'

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
const VERB_FACTOR = 2
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

// Indexing an agent's words costs far more than drafting with them: keep indexed agents across drafts.
const INDEX_CACHE_SIZE = 5000
const indexed = new Map<string, IndexedAgent>()

const sameWords = (a: AgentProfile, b: AgentProfile) =>
  a.name === b.name && a.instructions === b.instructions && a.tools.length === b.tools.length && a.tools.every((t, i) => t === b.tools[i])

function indexAgent(agent: AgentProfile): IndexedAgent {
  const cached = indexed.get(agent.id)
  if (cached && sameWords(cached.agent, agent)) return cached
  const weights = new Map<string, number>()
  const note = (stems: string[], weight: number) => {
    for (const s of stems) weights.set(s, Math.max(weights.get(s) ?? 0, weight))
  }
  note(contentStems(agent.instructions ?? ''), INSTRUCTION_WEIGHT)
  note(contentStems(agent.tools.join(' ')), TOOL_WEIGHT)
  note(contentStems(agent.name), NAME_WEIGHT)
  const entry = { agent, nameWords: words(agent.name), weights }
  if (indexed.size >= INDEX_CACHE_SIZE) indexed.delete(indexed.keys().next().value as string)
  indexed.set(agent.id, entry)
  return entry
}

export class AgentIndex {
  private readonly agents: IndexedAgent[]
  /** Agents by the first word of their name, for finding names in a step in one pass. */
  private readonly byFirstWord = new Map<string, IndexedAgent[]>()

  constructor(agents: AgentProfile[]) {
    this.agents = agents.map(indexAgent)
    for (const indexed of this.agents) {
      const first = indexed.nameWords[0]
      if (first === undefined) continue
      const list = this.byFirstWord.get(first) ?? []
      list.push(indexed)
      this.byFirstWord.set(first, list)
    }
  }

  /** Agents' names in lower case, for telling an actor from an object. */
  names(): string[] {
    return this.agents.map((a) => a.nameWords.join(' '))
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
    const verb = ws.find((w) => isVerb(w))
    const verbStem = verb === undefined ? null : stemsOfWords([verb])[0]
    const stems = [...new Set(stemsOfWords(ws))]
    let best: Match = { agent: null, score: 0 }
    for (const { agent, weights } of this.agents) {
      let score = 0
      for (const s of stems) score += (weights.get(s) ?? 0) * (s === verbStem ? VERB_FACTOR : 1)
      if (score > best.score) best = { agent, score }
    }
    return best.score >= MATCH_THRESHOLD ? best : { agent: null, score: best.score }
  }
}
