// The state of a refine: the phases being edited, the changes and warnings so far, and how instructions
// name phases and agents. Phase references are matched against each phase's name, normalised once.
import { distance } from 'fastest-levenshtein'
import { NIL_UUID } from '../../http/schemas.js'
import { MAX_PHASES, type Change, type CycleDefinition, type Phase, type Warning } from '../../cycles/schemas.js'
import { antecedentOf, buildPhase, type DraftContext } from '../generate.js'
import { MAX_REFERENCE_LENGTH, stem, words } from '../../text/language.js'
import { nominalVerb } from '../../text/lexicon.js'

const ORDINALS = ['first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth', 'ninth', 'tenth']
/** A name this similar (1 − edit distance / length) to a reference is the phase it means. */
const NAME_SIMILARITY = 0.6
/** "it", "this step", "the new phase": the phase the previous instruction touched. */
const PRONOUN_REFERENCE = /^(?:it|this|that|this one|that one|the one|(?:this|that|the new|the same|the added)\s+(?:phase|step|stage))$/

export const unquote = (text: string) => text.trim().replace(/^["“'‘]|["”'’]$/g, '').trim()

interface NormalisedName {
  name: string
  lower: string
  words: Set<string>
  /** Stems of the name's words ("Writer drafts reply" → writer, draft, repli). */
  stems: Set<string>
}

/** Words of a reference that name no part of a phase: "the draft too", "the metrics step as well". */
const FILLER = new Set(['the', 'a', 'an', 'this', 'that', 'too', 'also', 'as', 'well', 'step', 'steps', 'phase', 'phases', 'stage', 'stages', 'part', 'one', 'of', 'cycle'])

/** Stems a word of a reference may match in a phase name: its own, and its verb's if it is a noun of one ("publication" → publish). */
const referenceStems = (word: string): string[] => {
  const verb = nominalVerb(word)
  return verb ? [stem(word), stem(verb)] : [stem(word)]
}

export class Editor {
  readonly phases: Phase[]
  readonly warnings: Warning[] = []
  private readonly changes = new Map<string, Change>()
  private readonly names = new WeakMap<Phase, NormalisedName>()
  /** The phase the latest instruction touched, for "it" in the next. */
  touched: Phase | null = null
  /** The phases the last reference matched equally well, when it matched more than one. */
  private tied: Phase[] = []
  triggerName: string
  description: string

  readonly context: DraftContext

  constructor(
    current: CycleDefinition,
    context: DraftContext,
  ) {
    this.context = context
    this.phases = current.phasesTemplate.map((p) => ({ ...p, operatorPool: [...p.operatorPool] }))
    this.triggerName = current.triggerName
    this.description = current.description
  }

  /** Records a change; one entry per phase and kind, details joined. */
  note(op: Change['op'], phase: Phase, detail: string): void {
    this.touched = phase
    const existing = this.changes.get(phase.id)
    if (!existing) this.changes.set(phase.id, { op, phaseId: phase.id, detail })
    else if (op === 'remove' && existing.op === 'add') this.changes.delete(phase.id)
    else if (op === 'remove') this.changes.set(phase.id, { op, phaseId: phase.id, detail })
    else existing.detail = `${existing.detail}; ${detail}`
    if (op === 'remove') this.touched = null
  }

  changeList(): Change[] {
    return [...this.changes.values()]
  }

  /** A phase's name, lower case and as a set of words, computed once per name. */
  private normalised(phase: Phase): NormalisedName {
    let entry = this.names.get(phase)
    if (!entry || entry.name !== phase.phaseName) {
      const lower = phase.phaseName.toLowerCase().slice(0, MAX_REFERENCE_LENGTH)
      const nameWords = words(lower)
      entry = { name: phase.phaseName, lower, words: new Set(nameWords), stems: new Set(nameWords.map(stem)) }
      this.names.set(phase, entry)
    }
    return entry
  }

  /** A phase by pronoun ("it"), position ("the first phase", "step 2", "the last step") or name (closest match). */
  find(reference: string): number {
    this.tied = []
    let ref = reference.trim().toLowerCase().replace(/^the\s+/, '').replace(/['’]s$/, '')
    if (PRONOUN_REFERENCE.test(ref) || PRONOUN_REFERENCE.test(`the ${ref}`)) return this.touched ? this.phases.indexOf(this.touched) : -1
    const numbered = /^(?:phase|step|stage)\s+#?(\d+)$/.exec(ref) ?? /^#(\d+)$/.exec(ref)
    if (numbered) return this.inRange(Number(numbered[1]) - 1)
    ref = ref
      .replace(/^(?:phase|step|stage)\s+(?:called|named)\s+/, '')
      .replace(/\s+(?:phase|step|stage)s?$/, '')
      .replace(/\s+(?:operators?|operator pool|pool)$/, '')
      .replace(/['’]s$/, '')
      .trim()
    ref = unquote(ref).toLowerCase()
    if (/^(?:last|final)$/.test(ref)) return this.phases.length - 1
    if (/^(?:penultimate|second[- ]to[- ]last|second[- ]last)$/.test(ref)) return this.inRange(this.phases.length - 2)
    const ordinal = ORDINALS.indexOf(ref)
    if (ordinal !== -1) return this.inRange(ordinal)
    const numeric = /^(\d+)(?:st|nd|rd|th)$/.exec(ref)
    if (numeric) return this.inRange(Number(numeric[1]) - 1)
    const exact = this.phases.findIndex((p) => this.normalised(p).lower === ref)
    if (exact !== -1) return exact
    const byWords = this.byWords(ref)
    return byWords === null ? this.closest(ref) : byWords
  }

  /**
   * A phase named by words of its name or by its verb's noun ("the draft", "the metrics", "the proofreading"):
   * the phase whose name has every such word, by stem; of several, the one whose name they cover most. Null
   * when none has them all; −1, noted in `tied`, when two cover their names equally.
   */
  private byWords(ref: string): number | null {
    const refWords = words(ref).filter((w) => !FILLER.has(w))
    if (refWords.length === 0 || refWords.length > 8) return null
    const wanted = refWords.map(referenceStems)
    let best: { share: number; indexes: number[] } = { share: 0, indexes: [] }
    this.phases.forEach((phase, index) => {
      const { stems } = this.normalised(phase)
      if (stems.size === 0 || !wanted.every((options) => options.some((s) => stems.has(s)))) return
      const share = refWords.length / stems.size
      if (share > best.share) best = { share, indexes: [index] }
      else if (share === best.share) best.indexes.push(index)
    })
    if (best.indexes.length === 0) return null
    if (best.indexes.length === 1) return best.indexes[0] as number
    this.tied = best.indexes.map((i) => this.phases[i] as Phase)
    return -1
  }

  private inRange(index: number): number {
    return index >= 0 && index < this.phases.length ? index : -1
  }

  private closest(ref: string): number {
    if (ref.length === 0 || ref.length > MAX_REFERENCE_LENGTH) return -1
    const refWords = words(ref)
    let best = { index: -1, similarity: 0 }
    for (let index = 0; index < this.phases.length; index++) {
      const { lower: name, words: nameWords } = this.normalised(this.phases[index] as Phase)
      const longer = Math.max(name.length, ref.length, 1)
      let similarity = refWords.length > 0 && refWords.every((w) => nameWords.has(w)) ? 0.8 : 0
      // The edit distance is at least the difference in length: skip it when that alone rules the name out.
      const bound = 1 - Math.abs(name.length - ref.length) / longer
      if (bound >= NAME_SIMILARITY && bound > similarity && bound > best.similarity) {
        similarity = Math.max(similarity, 1 - distance(name, ref) / longer)
      }
      if (similarity > best.similarity) best = { index, similarity }
    }
    return best.similarity >= NAME_SIMILARITY ? best.index : -1
  }

  /** The phase a reference names, or a warning and null. */
  phase(reference: string, instruction: string): Phase | null {
    const index = this.find(reference)
    if (index === -1 && this.tied.length > 1) {
      const names = this.tied.slice(0, 3).map((p) => `"${p.phaseName}"`)
      const others = this.tied.length > 3 ? ` or ${this.tied.length - 3} more` : ''
      const choice = others ? `${names.join(', ')}${others}` : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`
      this.warnings.push({ code: 'ambiguous-phase', detail: `"${unquote(reference).slice(0, MAX_REFERENCE_LENGTH)}" could be ${choice} in "${instruction.slice(0, 2 * MAX_REFERENCE_LENGTH)}"; name one of them: that instruction changed nothing.` })
      return null
    }
    if (index === -1) {
      this.warnings.push({ code: 'unknown-phase', detail: `No phase matches "${unquote(reference).slice(0, MAX_REFERENCE_LENGTH)}" in "${instruction.slice(0, 2 * MAX_REFERENCE_LENGTH)}"; that instruction changed nothing.` })
      return null
    }
    const phase = this.phases[index] as Phase
    this.touched = phase
    return phase
  }

  /** The agent a reference names: exactly, else the closest name; "nobody" is the nil UUID. */
  agentId(reference: string, instruction: string): string | null {
    if (/^(?:nobody|no one|no agent|none)$/i.test(reference.trim())) return NIL_UUID
    const agent = this.context.agents.named(reference)?.agent ?? this.context.agents.closestByName(reference)
    if (!agent) {
      this.warnings.push({ code: 'unknown-agent', detail: `No agent of the workspace is called "${unquote(reference).slice(0, MAX_REFERENCE_LENGTH)}" in "${instruction.slice(0, 2 * MAX_REFERENCE_LENGTH)}"; that instruction changed nothing.` })
      return null
    }
    return agent.id
  }

  /** A new phase for a step of work at a position; `agentId`, when the instruction names who does it ("handled by Editor"). */
  insert(at: number, step: string, agentId?: string): void {
    if (this.phases.length >= MAX_PHASES) {
      this.warnings.push({ code: 'too-many-steps', detail: `A cycle holds at most ${MAX_PHASES} phases; "${step.slice(0, MAX_REFERENCE_LENGTH)}" was not added.` })
      return
    }
    const warnings: Warning[] = []
    const phase = buildPhase(step, this.context, warnings, antecedentOf(this.phases[at - 1]))
    if (agentId !== undefined) phase.agentId = agentId
    this.warnings.push(...warnings.filter((w) => agentId === undefined || w.code !== 'no-agent'))
    this.phases.splice(at, 0, phase)
    this.note('add', phase, `added "${phase.phaseName}" at position ${at + 1}`)
  }
}

export type Handler = [RegExp, (editor: Editor, match: RegExpExecArray, instruction: string) => void]
