// The drafter's lexicon: which words can be verbs, their base forms, the verbs behind agentive nouns
// ("Translator" → translate) and synonyms for the work a step names. Parts of speech, lemmas and
// conjugation come from compromise's lexicon and conjugation model, read one word at a time and memoised
// (parsing whole prompts with compromise would cost ~1 ms a word); the synonym table is our own.
import { createRequire } from 'node:module'
import { stemmer } from 'stemmer'

interface Model {
  one: { lexicon: Record<string, string | string[]>; abbreviations: Record<string, true> }
  two: { switches: Record<string, string> }
}
interface Transform {
  verb: { toInfinitive: (word: string, model: Model, tense: string) => string }
}

interface Compromise {
  model(): unknown
  world(): unknown
}

// compromise is loaded at the first word looked up, not at start-up (it is a large share of a cold start and only
// drafting reads it), through its one-file CommonJS build so the load is synchronous.
let lexicon: { model: Model; transform: Transform; abbreviations: Set<string> } | undefined
function compromise(): { model: Model; transform: Transform; abbreviations: Set<string> } {
  if (!lexicon) {
    const nlp = createRequire(import.meta.url)('compromise') as Compromise
    const model = nlp.model() as Model
    lexicon = {
      model,
      transform: (nlp.world() as { methods: { two: { transform: Transform } } }).methods.two.transform,
      // Abbreviations after which a full stop does not end a sentence ("Dr.", "e.g.", "vs.", "Inc."): compromise's list and a few more.
      abbreviations: new Set([...Object.keys(model.one.abbreviations), 'eg', 'e.g', 'ie', 'i.e', 'vs', 'etc', 'cf', 'al', 'no', 'nos', 'approx', 'dept', 'est', 'fig']),
    }
  }
  return lexicon
}

const VERB_TAGS = new Set(['Verb', 'Infinitive', 'PresentTense', 'PastTense', 'Gerund', 'Participle', 'PhrasalVerb', 'Imperative'])

const tagsOf = (word: string): string[] => {
  const tags = compromise().model.one.lexicon[word]
  return tags === undefined ? [] : Array.isArray(tags) ? tags : [tags]
}

/** Verbs of work compromise does not list (or lists only as nouns), and nouns it lists as verbs that are never steps. */
const EXTRA_VERBS = new Set(['email', 'audit', 'benchmark', 'crunch', 'proofread', 'countersign', 'triage', 'localise', 'localize', 'summarise', 'analyse', 'categorise', 'prioritise', 'organise', 'text', 'message', 'phone', 'chart', 'ping', 'sanity-check', 'fact-check', 'spellcheck', 'screenshot', 'geocode', 'timestamp', 'upsell'])
const NOT_VERBS = new Set(['the', 'a', 'an', 'and', 'or', 'to', 'of', 'in', 'on', 'for', 'with', 'by', 'it', 'is', 'are', 'be', 'was', 'were', 'been', 'being', 'has', 'had', 'having', 'will', 'would', 'should', 'must', 'can', 'could', 'may', 'might', 'shall', 'so', 'then', 'when', 'whenever', 'once', 'every', 'each', 'all', 'any', 'no', 'not', 'dr', 'mr', 'mrs', 'ms', 'prof', 'new', 'last', 'first', 'next', 'finally', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday', 'morning', 'evening', 'night', 'week', 'day'])
const VERB_PREFIXES = ['counter', 're', 'pre', 'co', 'cross', 'over', 'under', 'out', 'up', 'down', 'double', 'sub', 'auto']
const VERB_SUFFIX = /(?:ise|ize|ify|ate)$/

// Bounded memo: a hostile prompt of distinct words cannot grow it without end.
const MEMO_SIZE = 50000
const verbs = new Map<string, string | null>()

function remember<T>(memo: Map<string, T>, key: string, value: T): T {
  if (memo.size >= MEMO_SIZE) memo.clear()
  memo.set(key, value)
  return value
}

function isBaseVerb(word: string): boolean {
  if (EXTRA_VERBS.has(word)) return true
  if (NOT_VERBS.has(word)) return false
  const tags = tagsOf(word)
  if (tags.some((t) => VERB_TAGS.has(t))) return true
  if (compromise().model.two.switches[word]?.includes('Verb')) return true
  // Words compromise does not know at all: the verb-forming suffixes say it ("translate", "notify", "summarize").
  return tags.length === 0 && VERB_SUFFIX.test(word) && word.length > 5 && !SUFFIX_NOUNS.has(word)
}

/** Unknown to compromise, ending like a verb, yet nouns. */
const SUFFIX_NOUNS = new Set(['climate', 'candidate', 'template', 'pirate', 'primate', 'karate', 'magnate', 'affiliate', 'surrogate', 'laureate', 'prelate'])

/** The base form of a word that can be a verb ("pulls" → "pull", "translating" → "translate"), else null. */
export function verbLemma(word: string): string | null {
  const lower = word.toLowerCase()
  const known = verbs.get(lower)
  if (known !== undefined) return known
  return remember(verbs, lower, findVerbLemma(lower))
}

function findVerbLemma(word: string): string | null {
  if (word.length < 2 || word.length > 30 || !/^[a-z][a-z-]*$/.test(word) || NOT_VERBS.has(word)) return null
  const tags = tagsOf(word)
  if (EXTRA_VERBS.has(word) || tags.includes('Infinitive') || compromise().model.two.switches[word]?.includes('Verb')) return word
  const tenses: Array<[RegExp, string]> = [[/(?:s|es)$/, 'PresentTense'], [/ed$/, 'PastTense'], [/ing$/, 'Gerund']]
  for (const [ending, tense] of tenses) {
    if (!ending.test(word)) continue
    const { transform, model } = compromise()
    const base = transform.verb.toInfinitive(word, model, tense)
    if (base && base !== word && isBaseVerb(base)) return base
    // compromise's rules miss some spellings ("summarises" → "summarise"): try the plain endings too.
    for (const candidate of [word.replace(/s$/, ''), word.replace(/es$/, ''), word.replace(/ed$/, ''), word.replace(/ed$/, 'e'), word.replace(/ing$/, ''), word.replace(/ing$/, 'e')]) {
      if (candidate !== word && candidate.length > 1 && isBaseVerb(candidate)) return candidate
    }
  }
  if (isBaseVerb(word)) return word
  for (const prefix of VERB_PREFIXES) {
    if (word.startsWith(prefix) && word.length > prefix.length + 2) {
      const rest = findVerbLemma(word.slice(prefix.length))
      if (rest) return prefix + rest
    }
  }
  if (VERB_SUFFIX.test(word) && word.length > 5) return word
  return null
}

// Agentive nouns: the verb the agent's name says it does.
const AGENTIVE: Array<[RegExp, string[]]> = [
  [/ers$|er$/, ['', 'e']],
  [/ors$|or$/, ['', 'e']],
  [/ists$|ist$/, ['e', 'ise', 'ize', '']],
  [/ians$|ian$/, ['', 'e']],
  [/ants$|ant$/, ['', 'e']],
]
const IRREGULAR_AGENTIVE: Record<string, string> = { analyst: 'analyse', proofreader: 'proofread', copywriter: 'write', planner: 'plan', shipper: 'ship', scheduler: 'schedule' }
const agentives = new Map<string, string | null>()

/** The verb an agentive noun names ("writer" → write, "translator" → translate, "analyst" → analyse), else null. */
export function agentiveVerb(noun: string): string | null {
  const lower = noun.toLowerCase()
  const known = agentives.get(lower)
  if (known !== undefined) return known
  let found: string | null = IRREGULAR_AGENTIVE[lower] ?? null
  for (const [ending, endings] of found ? [] : AGENTIVE) {
    const match = ending.exec(lower)
    if (!match) continue
    const root = lower.slice(0, match.index)
    for (const end of endings) {
      const candidate = root + end
      if (candidate.length > 2 && isBaseVerb(candidate)) {
        found = candidate
        break
      }
      // doubled consonant: "planner" → "plan"
      if (end === '' && /([b-df-hj-np-tv-z])\1$/.test(root) && isBaseVerb(root.slice(0, -1))) {
        found = root.slice(0, -1)
        break
      }
    }
    if (found) break
  }
  return remember(agentives, lower, found)
}

// Words that name the same work: each maps to the words whose stems it also counts as (the workspace's
// agents describe their work in their own words). Phrasal verbs are read as one word (see PHRASAL).
const SYNONYMS: Record<string, string[]> = {
  research: ['investigate', 'search', 'source', 'find', 'look'],
  'look-up': ['research', 'search', 'find'],
  'find-out': ['research', 'search', 'investigate'],
  'dig-into': ['analyse', 'research', 'investigate'],
  investigate: ['research', 'analyse'],
  crunch: ['analyse', 'compute', 'metric', 'data'],
  analyse: ['analyze', 'analyst', 'compute', 'metric'],
  analyze: ['analyse', 'compute', 'metric'],
  chart: ['charts', 'analyse'],
  numbers: ['metric', 'data', 'figure'],
  figures: ['metric', 'data', 'numbers'],
  metrics: ['numbers', 'data'],
  proofread: ['edit', 'review'],
  edit: ['proofread', 'revise'],
  polish: ['edit', 'proofread'],
  ring: ['call', 'phone'],
  phone: ['call'],
  call: ['phone'],
  'set-up': ['schedule', 'book', 'arrange'],
  arrange: ['schedule', 'book'],
  schedule: ['book', 'calendar'],
  book: ['schedule', 'calendar'],
  'jot-down': ['write', 'draft'],
  write: ['draft', 'compose'],
  compose: ['write', 'draft'],
  draft: ['write', 'compose'],
  answer: ['reply', 'respond'],
  respond: ['reply', 'answer'],
  reply: ['answer', 'respond'],
  classify: ['triage', 'categorise', 'prioritise'],
  triage: ['classify', 'prioritise'],
  sort: ['classify', 'triage'],
  interpret: ['translate'],
  localise: ['translate'],
  localize: ['translate'],
  debug: ['fix', 'bug'],
  repair: ['fix'],
  patch: ['fix'],
  'fix-up': ['fix'],
  pull: ['extract', 'fetch'],
  extract: ['pull', 'read'],
  store: ['archive', 'file'],
  file: ['archive', 'store'],
}

/** The words a word also counts as (for searching the agents' full-text index). */
export const synonymWords = (word: string): string[] => SYNONYMS[word] ?? []

/** Agentive nouns a verb may appear as in an agent's name ("write" → writer, "analyse" → analyst). */
export function agentiveForms(verb: string): string[] {
  const root = verb.replace(/e$/, '')
  return [`${root}er`, `${root}or`, `${root}ist`, verb.replace(/(?:yse|yze|ise|ize)$/, 'yst'), `${verb}r`]
}

/** agentiveForms, and the irregular agentive nouns of the verb ("write" → copywriter). */
export function agentiveNouns(verb: string): string[] {
  return [...agentiveForms(verb), ...Object.keys(IRREGULAR_AGENTIVE).filter((noun) => IRREGULAR_AGENTIVE[noun] === verb)]
}

const synonymStems = new Map<string, string[]>()

/** Stems of the words a (lower-case, lemmatised or phrasal) word also counts as. */
export function synonymsOf(word: string): string[] {
  const cached = synonymStems.get(word)
  if (cached) return cached
  const list = (SYNONYMS[word] ?? []).map((w) => stemmer(w))
  synonymStems.set(word, list)
  return list
}

/** Phrasal verbs read as one word: the particle that makes them and the word they become ("look up" → look-up). */
export const PHRASAL: Record<string, string[]> = {
  look: ['up', 'into'],
  find: ['out'],
  dig: ['into'],
  set: ['up'],
  jot: ['down'],
  fix: ['up'],
  hand: ['off', 'over'],
  sign: ['off'],
  write: ['up'],
  sort: ['out'],
  check: ['out'],
  follow: ['up'],
  pull: ['together'],
}

export function isAbbreviation(word: string): boolean {
  const lower = word.toLowerCase()
  // Dotted abbreviations ("e.g.", "U.S.") too.
  return compromise().abbreviations.has(lower) || /^(?:[a-z]\.)+[a-z]$/.test(lower)
}

// Nouns of work whose stem is not their verb's ("publication" → publish): a phase may be named by its verb's noun.
const NOMINALS: Record<string, string> = {
  publication: 'publish', approval: 'approve', analysis: 'analyse', summary: 'summarise', delivery: 'deliver',
  creation: 'create', classification: 'classify', removal: 'remove', submission: 'submit', verification: 'verify',
  qualification: 'qualify', notification: 'notify', payment: 'pay', shipment: 'ship', reproduction: 'reproduce',
}

/** The verb a noun of work names ("publication" → publish, "analysis" → analyse), else null. */
export function nominalVerb(noun: string): string | null {
  return NOMINALS[noun.toLowerCase()] ?? null
}
