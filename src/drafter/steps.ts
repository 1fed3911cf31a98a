// Reading a prompt: the trigger clause, then the steps of work in order (CONVENTIONS.md, Generate 1–2).
import { isVerb, slug, splitSentences, words } from '../text/language.js'

export interface Trigger {
  name: string
  /** The clause as written, without its leading word ("a support ticket arrives"). */
  phrase: string
  /** The leading word ("when", "every", …), for the description. */
  lead: string
}

const TRIGGER_LEAD = /^\s*(whenever|when|each time|every|once|on)\s+/i
const CLAUSE_END = /[,:;\n]|\.(?:\s|$)|\s+then\s+/

/** A trigger phrase as in a refine instruction ("when an urgent ticket is escalated") → its trigger. */
export function triggerFromPhrase(phrase: string): Trigger {
  const lead = TRIGGER_LEAD.exec(phrase)
  const rest = (lead ? phrase.slice(lead[0].length) : phrase).trim().replace(/[.!?]+$/, '')
  return { name: slug(rest) || 'manual', phrase: rest, lead: lead ? (lead[1] as string).toLowerCase() : 'when' }
}

/** The leading trigger clause, if any, and the text after it. */
export function splitTrigger(prompt: string): { trigger: Trigger | null; body: string } {
  const lead = TRIGGER_LEAD.exec(prompt)
  if (!lead) return { trigger: null, body: prompt }
  const afterLead = prompt.slice(lead[0].length)
  const end = CLAUSE_END.exec(afterLead)
  if (!end) return { trigger: null, body: prompt }
  const phrase = afterLead.slice(0, end.index).trim()
  if (!phrase || ((lead[1] as string).toLowerCase() === 'once' && /^that\b/i.test(phrase))) return { trigger: null, body: prompt }
  const name = slug(phrase)
  if (!name) return { trigger: null, body: prompt }
  // A clause ended by "then" leaves it in the body, where it separates steps as usual.
  const body = /then/i.test(end[0]) ? afterLead.slice(end.index) : afterLead.slice(end.index + end[0].length)
  return { trigger: { name, phrase, lead: (lead[1] as string).toLowerCase() }, body }
}

const LIST_ITEM = /^\s*(?:\d{1,3}[.)]|[-*•+])\s+(.*)$/

// Sequencing words: anywhere at a clause boundary, or — for "then" and friends — after any white space.
const SEQUENCE_SPLIT =
  /(?:^|[,;]\s*|\s+)(?:and\s+)?(?:then|after that|afterwards|finally|lastly|once that is done|once done|next|first|second|third)\b,?\s*/gi
const WEAK_SEQUENCE = /^(?:next|first|second|third)$/i

const sentences = splitSentences

/** Splits a sentence at sequencing words ("first …, then …, and finally …"). */
function splitSequence(sentence: string): string[] {
  const parts: string[] = []
  let last = 0
  for (const match of sentence.matchAll(SEQUENCE_SPLIT)) {
    const word = match[0].replace(/[,;\s]|^and\s+/gi, ' ').trim().replace(/^and\s+/i, '').replace(/,$/, '')
    const atBoundary = match.index === 0 || /^[,;]/.test(match[0])
    // "first", "next" and ordinals are sequencing words only where a clause begins ("write a first draft" is one step).
    if (WEAK_SEQUENCE.test(word) && !atBoundary) continue
    parts.push(sentence.slice(last, match.index))
    last = match.index + match[0].length
  }
  parts.push(sentence.slice(last))
  return parts.map(cleanStep).filter((p) => p.length > 0)
}

const LEADING_CONJUNCTION = /^(?:and|or|also|,)\s+/i

function cleanStep(text: string): string {
  return text.trim().replace(/^[,;:]\s*/, '').replace(LEADING_CONJUNCTION, '').replace(/[,;:]\s*$/, '').trim()
}

/** A clause begins with a verb, or with an actor (agent name or @handle) followed by a verb. */
function beginsWithVerb(clause: string, actorWords: ReadonlySet<string>): boolean {
  const ws = words(clause)
  if (isVerb(ws[0])) return true
  for (let skip = 1; skip <= 3 && skip < ws.length; skip++) {
    const actor = ws.slice(0, skip).join(' ')
    if ((actorWords.has(actor) || (skip === 1 && ws[0]?.startsWith('@'))) && isVerb(ws[skip])) return true
  }
  return false
}

/** "Research X, analyse Y, and write Z": split a series only when every part begins with a verb. */
function splitSeries(clause: string, actorWords: ReadonlySet<string>): string[] {
  const parts: string[] = []
  for (const part of clause.split(/\s*[,;]\s*/).map(cleanStep)) {
    if (part.length === 0) continue
    // A trailing assignment ("…, handled by Editor", "…, assigned to Analyst") belongs to the clause before it.
    if (parts.length > 0 && TRAILING_ASSIGNMENT.test(part)) parts[parts.length - 1] += `, ${part}`
    else parts.push(part)
  }
  if (parts.length < 2) return [clause]
  if (!parts.every((part) => beginsWithVerb(part, actorWords))) return [clause]
  // In a series, the last item may follow a plain "and" ("classify it, draft a reply and translate it").
  const last = parts[parts.length - 1] as string
  const and = / and (?=(\S+))/.exec(last)
  if (and && isVerb((and[1] as string).toLowerCase()) && beginsWithVerb(last.slice(and.index + 5), actorWords)) {
    parts.splice(parts.length - 1, 1, last.slice(0, and.index), last.slice(and.index + 5))
  }
  return parts
}

const TRAILING_ASSIGNMENT = /^(?:to\s+be\s+)?(?:handled|done|owned|assigned|given|run|performed|taken)\s+(?:by|to)\b/i

// The names as a set, made once per list: an agents' index hands out the same frozen list of names every time
// (assign.ts names()), and a draft over a workspace of 200 agents would otherwise build the set at every draft.
const actorSets = new WeakMap<readonly string[], ReadonlySet<string>>()
function actorSet(names: readonly string[]): ReadonlySet<string> {
  if (!Object.isFrozen(names)) return new Set(names)
  let set = actorSets.get(names)
  if (!set) actorSets.set(names, (set = new Set(names)))
  return set
}

/**
 * The steps of a prompt body, in order. Numbered or bulleted lines are one step each; otherwise
 * sentences, split at sequencing words and then at comma/semicolon series of verb clauses.
 * `actorNames` are the workspace agents' names, lower case (so that "Analyst pulls …" counts as a verb clause).
 */
export function splitSteps(body: string, actorNames: readonly string[]): string[] {
  const actorWords = actorSet(actorNames)
  const lines = body.split('\n')
  const items = lines.map((line) => LIST_ITEM.exec(line)).filter((m): m is RegExpExecArray => m !== null)
  if (items.length > 0) {
    return lines
      .flatMap((line) => {
        const item = LIST_ITEM.exec(line)
        if (item) return [cleanStep((item[1] as string).replace(/[.!?]+$/, ''))]
        // A heading line before the list ("Steps:") is not a step; other prose lines are read as sentences.
        return /:\s*$/.test(line) ? [] : sentences(line).flatMap((s) => splitSequence(s.replace(/[.!?]+$/, '')))
      })
      .filter((s) => s.length > 0)
  }
  return sentences(body)
    .map((s) => s.replace(/[.!?]+$/, ''))
    .flatMap((s) => splitSequence(s))
    .flatMap((clause) => splitSeries(clause, actorWords))
}
