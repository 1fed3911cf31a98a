// The small amount of English the builtin drafter knows: words, stems, verbs, handles and slugs.
// Every regular expression here is linear: no nested quantifiers, so a 100 KB prompt costs 100× a 1 KB one.
import { stemmer } from 'stemmer'
import { agentiveNouns, agentiveVerb, isAbbreviation, PHRASAL, synonymsOf, synonymWords, verbLemma } from './lexicon.js'

export const DETERMINERS = new Set(['a', 'an', 'the', 'each', 'every', 'any', 'all'])

const PRONOUNS = new Set(['it', 'them', 'this', 'that', 'these', 'those', 'they', 'its', 'their', 'his', 'her', 'our', 'your', 'my', 'one'])

export const STOPWORDS = new Set([
  ...DETERMINERS,
  ...PRONOUNS,
  'and', 'or', 'but', 'nor', 'of', 'to', 'in', 'on', 'at', 'by', 'for', 'with', 'from', 'into', 'onto', 'about', 'as', 'than',
  'is', 'are', 'be', 'been', 'was', 'were', 'do', 'does', 'done', 'did', 'have', 'has', 'had', 'let', 'make', 'get', 'should',
  'will', 'would', 'can', 'could', 'may', 'might', 'must', 'shall', 'then', 'first', 'next', 'finally', 'after', 'afterwards',
  'before', 'once', 'when', 'whenever', 'if', 'so', 'up', 'out', 'back', 'over', 'some', 'more', 'most', 'other', 'such', 'only',
  'own', 'same', 'too', 'very', 'just', 'now', 'new', 'last', 'week', 'weeks', 'day', 'days', 'month', 'months', 'we', 'i', 'you',
  'me', 'us', 'him', 'who', 'what', 'which', 'there', 'here', 'step', 'steps', 'phase', 'phases', 'please', 'also', 'not', 'no',
])

const PREPOSITIONS = new Set(['to', 'in', 'on', 'at', 'by', 'for', 'with', 'from', 'into', 'onto', 'about', 'against', 'before', 'after', 'until', 'so', 'and', 'or', 'then', 'using', 'via', 'per', 'as', 'if', 'when', 'while', 'because', 'that', 'which', 'who'])

// Verbs that open a step of work. Stems, so that "pulls", "pulling" and "pull" all count.
const VERBS = [
  'add', 'alert', 'analyse', 'analyze', 'answer', 'apply', 'approve', 'archive', 'ask', 'assess', 'assign', 'attach', 'audit', 'book',
  'brief', 'build', 'calculate', 'call', 'categorise', 'categorize', 'check', 'classify', 'clean', 'close', 'collect', 'combine',
  'compare', 'compile', 'complete', 'compose', 'compute', 'confirm', 'contact', 'convert', 'copy', 'correct', 'create', 'deliver',
  'deploy', 'describe', 'design', 'detect', 'discuss', 'dispatch', 'do', 'download', 'draft', 'edit', 'email', 'enrich', 'ensure',
  'escalate', 'estimate', 'evaluate', 'export', 'extract', 'fetch', 'file', 'fill', 'find', 'finish', 'fix', 'flag', 'follow',
  'format', 'forward', 'gather', 'generate', 'get', 'give', 'greet', 'handle', 'have', 'identify', 'import', 'inform', 'inspect',
  'investigate', 'invite', 'invoice', 'label', 'let', 'list', 'load', 'localise', 'localize', 'log', 'look', 'make', 'map', 'measure',
  'merge', 'message', 'monitor', 'move', 'notify', 'open', 'order', 'organise', 'organize', 'outline', 'parse', 'pay', 'phone', 'pick',
  'plan', 'polish', 'post', 'prepare', 'present', 'prioritise', 'prioritize', 'process', 'produce', 'proofread', 'publish', 'pull',
  'push', 'put', 'qualify', 'query', 'rank', 'read', 'record', 'refund', 'remind', 'render', 'reply', 'report', 'reproduce', 'request',
  'research', 'resolve', 'respond', 'review', 'revise', 'rewrite', 'ring', 'route', 'run', 'save', 'scan', 'schedule', 'score',
  'scrape', 'screen', 'search', 'select', 'send', 'set', 'share', 'ship', 'sign', 'sing', 'sort', 'spell', 'start', 'store', 'submit',
  'suggest', 'summarise', 'summarize', 'survey', 'sync', 'tag', 'take', 'test', 'text', 'track', 'transcribe', 'transform',
  'translate', 'triage', 'turn', 'update', 'upload', 'validate', 'verify', 'wait', 'welcome', 'write',
]
const VERB_STEMS = new Set(VERBS.map((v) => stemmer(v)))
const VERB_BASE = new Map(VERBS.map((v) => [stemmer(v), v]))

const IRREGULAR_PARTICIPLES: Record<string, string> = {
  build: 'built', buy: 'bought', bring: 'brought', choose: 'chosen', do: 'done', draw: 'drawn', find: 'found', get: 'got',
  give: 'given', have: 'had', hold: 'held', keep: 'kept', let: 'let', make: 'made', pay: 'paid', put: 'put', read: 'read',
  ring: 'rung', run: 'run', send: 'sent', set: 'set', sing: 'sung', take: 'taken', tell: 'told', think: 'thought', write: 'written',
  proofread: 'proofread', rewrite: 'rewritten', spell: 'spelled',
}

// Prompts repeat their words: stems are memoised (bounded, so that a hostile prompt cannot grow it without end).
const STEM_CACHE_SIZE = 20000
const stems = new Map<string, string>()

export function stem(word: string): string {
  let stemmed = stems.get(word)
  if (stemmed === undefined) {
    stemmed = stemmer(word.toLowerCase())
    if (stems.size >= STEM_CACHE_SIZE) stems.clear()
    stems.set(word, stemmed)
  }
  return stemmed
}

/** Words of a text as written, without punctuation (possessive 's dropped; @handles and inner hyphens kept). */
export function tokens(text: string): string[] {
  return (text.match(/@?[\p{L}\p{N}]+(?:['’-][\p{L}\p{N}]+)*/gu) ?? []).map((w) => w.replace(/['’]s$/i, ''))
}

/** Words of a text in lower case. */
export function words(text: string): string[] {
  return tokens(text.toLowerCase())
}

/** Stems of the meaningful words of a text (tool names like `phone_call` count as their parts). */
export function contentStems(text: string): string[] {
  return stemsOfWords(words(text.replace(/_/g, ' ')))
}

/** Stems of the meaningful ones of some lower-case words. */
export function stemsOfWords(ws: string[]): string[] {
  const result: string[] = []
  for (const w of ws) {
    if (w.startsWith('@') || STOPWORDS.has(w) || /^\d+$/.test(w)) continue
    if (w.includes('-')) for (const part of w.split('-')) result.push(stem(part))
    else result.push(stem(w))
  }
  return result
}

/** A word that can be a verb: our list of work verbs, else compromise's lexicon and conjugations (lexicon.ts). */
export const isVerb = (word: string | undefined): boolean => {
  if (word === undefined || word.startsWith('@')) return false
  const bare = word.replace(/['’]s$/, '')
  return VERB_STEMS.has(stem(bare)) || verbLemma(bare) !== null
}

/** The base form of a verb as written ("pulls" → "pull", "translating" → "translate"). */
export function baseVerb(word: string): string {
  const lower = word.toLowerCase()
  const base = VERB_BASE.get(stem(lower)) ?? verbLemma(lower) ?? lower
  // A word that is a noun too ("passes", "hands") is its own lemma to compromise: the plain endings say it.
  if (base === lower && lower.endsWith('s')) {
    const shorter = /(?:ss|sh|ch|x|z)es$/.test(lower) ? lower.slice(0, -2) : lower.slice(0, -1)
    if (verbLemma(shorter) === shorter) return shorter
  }
  return base
}

/** Stems of the verbs an agent's name says it does ("Contract Negotiator" → negoti). */
export function agentiveStems(name: string): string[] {
  const result: string[] = []
  for (const w of words(name)) {
    const verb = agentiveVerb(w)
    if (verb) result.push(stem(verb))
  }
  return result
}

/** A synonym counts for this much of the word itself. */
const SYNONYM_FACTOR = 0.5

/**
 * What a step's words say about its work, for matching agents: each stem with the factor its matches count
 * for — the step's own meaningful words 1, the synonyms of a word (phrasal verbs read as one: "look up" →
 * research) half that, and everything from the main verb (the first verb) double.
 */
export function workStems(ws: string[], verbFactor: number): Map<string, number> {
  const stems = new Map<string, number>()
  eachWorkStem(ws, verbFactor, (s, factor) => stems.set(s, Math.max(stems.get(s) ?? 0, factor)))
  return stems
}

/** Visits the stems of workStems, each with its factor and the word it is the stem of (a step may repeat a stem). */
function eachWorkStem(ws: string[], verbFactor: number, visit: (stem: string, factor: number, word: string) => void): void {
  const synonyms = (word: string, factor: number) => {
    const words = synonymWords(word)
    synonymsOf(word).forEach((s, k) => visit(s, factor, words[k] as string))
  }
  let verbSeen = false
  for (let i = 0; i < ws.length; i++) {
    const w = ws[i] as string
    if (w.startsWith('@')) continue
    const particles = PHRASAL[w]
    const next = ws[i + 1]
    const phrasal = particles && next !== undefined && particles.includes(next) ? `${w}-${next}` : null
    const isMainVerb = !verbSeen && isVerb(w)
    if (isMainVerb) verbSeen = true
    const factor = isMainVerb ? verbFactor : 1
    if (phrasal) {
      synonyms(phrasal, factor)
      i++
      continue
    }
    if (STOPWORDS.has(w) || /^\d+$/.test(w)) continue
    if (w.includes('-')) for (const part of w.split('-')) visit(stem(part), factor, part)
    else visit(stem(w), factor, w)
    const lemma = isMainVerb ? (verbLemma(w) ?? w) : w
    if (lemma !== w) visit(stem(lemma), factor, lemma)
    synonyms(lemma, factor * SYNONYM_FACTOR)
  }
}

/**
 * A word to look agents up by in the full-text index, with the factor the scorer (assign.ts) gives a match
 * on its stem. `nameOnly`: an agentive noun ("negotiate" → negotiator), which counts only in the name of an
 * agent that has neither instructions nor tools (as the scorer reads such names).
 */
export interface WorkTerm {
  word: string
  factor: number
  nameOnly: boolean
}

/**
 * The terms of workStems as words the full-text index can search for (each stem once, at its highest factor),
 * then the agentive nouns of those that are verbs. Searched with column weights (name, tools, instructions) as
 * the scorer's, they give each agent the score the scorer will: so the best agents by the database are the best
 * by the scorer (up to the database's own tokenising and stemming).
 */
export function workTerms(ws: string[], verbFactor: number): WorkTerm[] {
  const byStem = new Map<string, WorkTerm>()
  eachWorkStem(ws, verbFactor, (s, factor, word) => {
    const known = byStem.get(s)
    if (!known || known.factor < factor) byStem.set(s, { word, factor, nameOnly: false })
  })
  const terms = [...byStem.values()]
  const agentive = new Map<string, WorkTerm>()
  for (const [s, { word, factor }] of byStem) {
    const lemma = verbLemma(word)
    if (!lemma) continue
    for (const noun of agentiveNouns(lemma)) {
      // Only the nouns the scorer reads back as this very stem ("writer" → write), and not those that have it
      // as their own stem ("translator" is found by "translate" in any name).
      const verb = agentiveVerb(noun)
      if (verb === null || stem(verb) !== s || stem(noun) === s) continue
      if ((agentive.get(noun)?.factor ?? 0) < factor) agentive.set(noun, { word: noun, factor, nameOnly: true })
    }
  }
  return [...terms, ...agentive.values()]
}

/**
 * Sentences of a text: a sentence ends at . ! ? followed by white space, or at a line break — but not at
 * the full stop of an abbreviation or an initial ("Dr. Smith", "e.g. the FAQ", "Acme Corp. into").
 */
export function splitSentences(text: string): string[] {
  const result: string[] = []
  let start = 0
  for (const match of text.matchAll(/[.!?]+(?=\s)|\n+/g)) {
    const end = match.index + match[0].length
    if (match[0] === '.') {
      const before = /([\p{L}.]{1,12})$/u.exec(text.slice(Math.max(start, match.index - 12), match.index))
      const word = before ? (before[1] as string).replace(/^\./, '') : ''
      // An initial ("J. Smith") only before a capitalised word; "call a b m. call c" ends at "m.".
      const initial = /^\p{L}$/u.test(word)
      if (word && (initial ? /^\s+\p{Lu}/u.test(text.slice(end, end + 3)) : isAbbreviation(word))) continue
    }
    const sentence = text.slice(start, end).trim()
    if (sentence && sentence !== match[0].trim()) result.push(sentence)
    else if (sentence && !/^[\n.!?]+$/.test(sentence)) result.push(sentence)
    start = end
  }
  const last = text.slice(start).trim()
  if (last) result.push(last)
  return result
}

export function pastParticiple(verb: string): string {
  const irregular = IRREGULAR_PARTICIPLES[verb]
  if (irregular) return irregular
  if (verb.endsWith('e')) return `${verb}d`
  if (/[^aeiou]y$/.test(verb)) return `${verb.slice(0, -1)}ied`
  if (/^[^aeiou]*[aeiou][^aeiouwxy]$/.test(verb)) return `${verb}${verb.slice(-1)}ed`
  return `${verb}ed`
}

/** @handles in order of mention, without the @, each once. */
export function handles(text: string): string[] {
  const found = text.match(/(?<![\p{L}\p{N}_.])@[\p{L}\p{N}_](?:[\p{L}\p{N}_.-]*[\p{L}\p{N}_])?/gu) ?? []
  return [...new Set(found.map((h) => h.slice(1)))]
}

/** lower-case kebab-case, determiners dropped: "a support ticket arrives" → "support-ticket-arrives". */
export function slug(phrase: string): string {
  const kept = words(phrase.replace(/['’]s\b/g, ''))
    .filter((w) => !DETERMINERS.has(w))
    .map((w) => w.replace(/^@/, '').replace(/['’]/g, ''))
  return kept.join('-').replace(/-+/g, '-').replace(/^-|-$/g, '')
}

/** Runs of spaces and tabs become one space (line breaks stay): no regular expression then meets a long run. */
export const collapseSpaces = (text: string): string => text.replace(/[^\S\n]+/g, ' ')

/** Phase and agent references longer than this are not names: fuzzy matching stops there. */
export const MAX_REFERENCE_LENGTH = 200

export const isPronoun = (word: string | undefined): boolean => word !== undefined && PRONOUNS.has(word.toLowerCase())

export const capitalise = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1)

/** The object of a clause that starts after its verb: words up to a preposition, without determiners. */
export function objectPhrase(rest: string[], limit = 4): string[] {
  const object: string[] = []
  for (const word of rest) {
    const lower = word.toLowerCase()
    if (PREPOSITIONS.has(lower) || word.startsWith('@')) break
    if (DETERMINERS.has(lower) || (PRONOUNS.has(lower) && !isAcronym(word))) continue
    object.push(word)
    if (object.length === limit) break
  }
  return object
}

/**
 * The object of a clause that starts after its verb, as objectPhrase reads it, in the words as shown (possessives
 * kept: "last week's sales numbers"): `words` of `rest` (lower case, possessives dropped, as tokens() gives them)
 * read, `shown` the same words as written; `end` is where the object stops.
 */
export function objectSpan(rest: string[], shown: string[], limit = 4): { words: string[]; end: number } {
  const object: string[] = []
  let i = 0
  for (; i < rest.length; i++) {
    const lower = (rest[i] as string).toLowerCase()
    if (PREPOSITIONS.has(lower) || lower.startsWith('@')) break
    if (DETERMINERS.has(lower) || (PRONOUNS.has(lower) && !isAcronym(shown[i] ?? ''))) continue
    object.push(shown[i] ?? (rest[i] as string))
    if (object.length === limit) return { words: object, end: i + 1 }
  }
  return { words: object, end: i }
}

/** Words of a text as written, possessives kept, one for each of tokens(). */
export function shownTokens(text: string): Array<{ word: string; at: number }> {
  return [...text.matchAll(/@?[\p{L}\p{N}]+(?:['’-][\p{L}\p{N}]+)*/gu)].map((m) => ({ word: m[0], at: m.index }))
}

/** "IT", "QA": capitals only — not the pronoun "it". */
const isAcronym = (word: string): boolean => word.length > 1 && /^\p{Lu}+$/u.test(word)
