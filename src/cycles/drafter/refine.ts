// Refine mode of the builtin engine: edit instructions applied in order to `current`
// (CONVENTIONS.md, Refine). Phases no instruction touches stay exactly as they were, ids included.
import { distance } from 'fastest-levenshtein'
import { NIL_UUID } from '../../http/schemas.js'
import { MAX_PHASES, type Change, type CycleDefinition, type Phase, type Warning } from '../schemas.js'
import { buildPhase, type DraftContext, type DraftOutcome } from './generate.js'
import { collapseSpaces, handles, MAX_REFERENCE_LENGTH, splitSentences, words } from './language.js'
import { triggerFromPhrase } from './steps.js'

const ORDINALS = ['first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth', 'ninth', 'tenth']
const INSTRUCTION_VERBS =
  'add|insert|append|include|invite|remove|drop|delete|skip|cut|rename|call|assign|reassign|give|hand|let|have|use|move|swap|switch|exchange|make|finish|end|start|begin|change|set|update|describe|trigger'
const INSTRUCTION_SPLIT = new RegExp(`\\s*(?:,\\s*(?:and\\s+)?(?:then\\s+)?|\\s+and\\s+(?:then\\s+)?|;\\s*)(?=(?:${INSTRUCTION_VERBS})\\b)`, 'i')

/** The instructions of a refine prompt, in order. */
function instructions(prompt: string): string[] {
  return splitSentences(collapseSpaces(prompt))
    .flatMap((sentence) => sentence.split(INSTRUCTION_SPLIT))
    .map((s) => s.trim().replace(/^(?:then|and then|also|next|finally|and|after that|afterwards),?\s+/i, '').replace(/[.!?]+$/, '').trim())
    .filter((s) => s.length > 0)
}

const unquote = (text: string) => text.trim().replace(/^["“'‘]|["”'’]$/g, '').trim()

class Editor {
  readonly phases: Phase[]
  readonly warnings: Warning[] = []
  private readonly changes = new Map<string, Change>()
  triggerName: string
  description: string

  constructor(
    current: CycleDefinition,
    readonly context: DraftContext,
  ) {
    this.phases = current.phasesTemplate.map((p) => ({ ...p, operatorPool: [...p.operatorPool] }))
    this.triggerName = current.triggerName
    this.description = current.description
  }

  /** Records a change; one entry per phase and kind, details joined. */
  note(op: Change['op'], phase: Phase, detail: string): void {
    const existing = this.changes.get(phase.id)
    if (!existing) this.changes.set(phase.id, { op, phaseId: phase.id, detail })
    else if (op === 'remove' && existing.op === 'add') this.changes.delete(phase.id)
    else if (op === 'remove') this.changes.set(phase.id, { op, phaseId: phase.id, detail })
    else existing.detail = `${existing.detail}; ${detail}`
  }

  changeList(): Change[] {
    return [...this.changes.values()]
  }

  /** A phase by position ("the first phase", "step 2", "the last step") or by name (closest match). */
  find(reference: string): number {
    let ref = reference.trim().toLowerCase().replace(/^the\s+/, '').replace(/['’]s$/, '')
    const numbered = /^(?:phase|step|stage)\s+#?(\d+)$/.exec(ref) ?? /^#(\d+)$/.exec(ref)
    if (numbered) return this.inRange(Number(numbered[1]) - 1)
    ref = ref.replace(/\s+(?:phase|step|stage)s?$/, '').replace(/\s+(?:operators?|operator pool|pool)$/, '').replace(/['’]s$/, '').trim()
    if (/^(?:last|final)$/.test(ref)) return this.phases.length - 1
    if (/^(?:penultimate|second[- ]to[- ]last|second[- ]last)$/.test(ref)) return this.inRange(this.phases.length - 2)
    const ordinal = ORDINALS.indexOf(ref)
    if (ordinal !== -1) return this.inRange(ordinal)
    const numeric = /^(\d+)(?:st|nd|rd|th)$/.exec(ref)
    if (numeric) return this.inRange(Number(numeric[1]) - 1)
    const exact = this.phases.findIndex((p) => p.phaseName.toLowerCase() === ref)
    if (exact !== -1) return exact
    return this.closest(ref)
  }

  private inRange(index: number): number {
    return index >= 0 && index < this.phases.length ? index : -1
  }

  private closest(ref: string): number {
    if (ref.length > MAX_REFERENCE_LENGTH) return -1
    const refWords = words(ref)
    let best = { index: -1, similarity: 0 }
    this.phases.forEach((phase, index) => {
      const name = phase.phaseName.toLowerCase().slice(0, MAX_REFERENCE_LENGTH)
      const nameWords = words(name)
      let similarity = 1 - distance(name, ref) / Math.max(name.length, ref.length, 1)
      if (refWords.length > 0 && refWords.every((w) => nameWords.includes(w))) similarity = Math.max(similarity, 0.8)
      if (similarity > best.similarity) best = { index, similarity }
    })
    return best.similarity >= 0.6 ? best.index : -1
  }

  /** The phase a reference names, or a warning and null. */
  phase(reference: string, instruction: string): Phase | null {
    const index = this.find(reference)
    if (index === -1) {
      this.warnings.push({ code: 'unknown-phase', detail: `No phase matches "${unquote(reference)}" in "${instruction}"; that instruction changed nothing.` })
      return null
    }
    return this.phases[index] as Phase
  }

  /** The agent a reference names: exactly, else the closest name; "nobody" is the nil UUID. */
  agentId(reference: string, instruction: string): string | null {
    if (/^(?:nobody|no one|no agent|none)$/i.test(reference.trim())) return NIL_UUID
    const agent = this.context.agents.named(reference)?.agent ?? this.context.agents.closestByName(reference)
    if (!agent) {
      this.warnings.push({ code: 'unknown-agent', detail: `No agent of the workspace is called "${unquote(reference)}" in "${instruction}"; that instruction changed nothing.` })
      return null
    }
    return agent.id
  }

  insert(at: number, step: string): void {
    if (this.phases.length >= MAX_PHASES) {
      this.warnings.push({ code: 'too-many-steps', detail: `A cycle holds at most ${MAX_PHASES} phases; "${step}" was not added.` })
      return
    }
    const phase = buildPhase(step, this.context, this.warnings)
    this.phases.splice(at, 0, phase)
    this.note('add', phase, `added "${phase.phaseName}" at position ${at + 1}`)
  }
}

type Handler = [RegExp, (editor: Editor, match: RegExpExecArray, instruction: string) => void]

const PHASE_WORD = /\b(?:steps?|phases?|stages?)\b/i

function addPhase(editor: Editor, rest: string, instruction: string): void {
  // "a step after Draft reply to proofread the reply" | "a QA phase before Publish" | "a final step to …" | "a summary by Analyst"
  const keyword = PHASE_WORD.exec(rest)
  let descriptor = keyword ? rest.slice(0, keyword.index) : rest
  let tail = keyword ? rest.slice(keyword.index + keyword[0].length).trim() : ''
  if (!keyword) {
    const position = /\s+(before|after|between)\s+/i.exec(rest)
    if (position) {
      descriptor = rest.slice(0, position.index)
      tail = rest.slice(position.index).trim()
    }
  }
  const descriptorWords = words(descriptor)
  let at = editor.phases.length
  if (descriptorWords.some((w) => w === 'first' || w === 'initial')) at = 0
  descriptor = descriptor.replace(/^\s*(?:a|an|one|another|new|extra|final|last|first|initial)\b\s*/gi, '').replace(/^\s*(?:a|an|new|final|last|first)\b\s*/gi, '').trim()
  let step = descriptor
  const placed = /^(before|after)\s+(.+)$/i.exec(tail)
  const between = /^between\s+(.+?)\s+and\s+(.+)$/i.exec(tail)
  if (between) {
    const index = editor.find(between[1] as string)
    if (index === -1) return void editor.phase(between[1] as string, instruction)
    at = index + 1
  } else if (placed) {
    const [refPart, stepPart] = splitReference(editor, placed[2] as string)
    const index = editor.find(refPart)
    if (index === -1) {
      editor.phase(refPart, instruction)
      return
    }
    at = (placed[1] as string).toLowerCase() === 'before' ? index : index + 1
    if (stepPart) step = stepPart
  } else if (tail) {
    step = tail.replace(/^(?:to|that|which|where|for|so that)\s+/i, '')
  }
  if (!step) {
    editor.warnings.push({ code: 'not-understood', detail: `"${instruction}" does not say what the new phase does; nothing was added.` })
    return
  }
  editor.insert(at, step)
}

/** "Draft reply to proofread the reply" → ["Draft reply", "proofread the reply"], trying the longest phase reference first. */
function splitReference(editor: Editor, text: string): [string, string] {
  const connectors = [...text.slice(0, MAX_REFERENCE_LENGTH).matchAll(/\s+(?:to|that|which|where|for|so that)\s+/gi)]
  for (const connector of connectors.reverse()) {
    const ref = text.slice(0, connector.index)
    if (editor.find(ref) !== -1) return [ref, text.slice((connector.index as number) + connector[0].length)]
  }
  return [text, '']
}

/** "Call the last phase Wrap-up": the longest leading words that name a phase exactly are the reference. */
function splitNameAndRest(editor: Editor, text: string): [number, string] {
  const parts = text.trim().split(/\s+/)
  // A reference is a few words; beyond that only "the rest" grows.
  for (let k = Math.min(parts.length - 1, 12); k >= 1; k--) {
    const ref = parts.slice(0, k).join(' ')
    const index = editor.find(ref)
    if (index !== -1) return [index, parts.slice(k).join(' ')]
  }
  return [-1, '']
}

function setPool(editor: Editor, phase: Phase, add: string[], remove: string[]): void {
  const before = phase.operatorPool.join(',')
  for (const handle of add) if (!phase.operatorPool.includes(handle)) phase.operatorPool.push(handle)
  phase.operatorPool = phase.operatorPool.filter((h) => !remove.includes(h))
  if (phase.operatorPool.join(',') !== before) {
    const detail = [add.length ? `added ${add.map((h) => `@${h}`).join(', ')} to operators` : '', remove.length ? `removed ${remove.map((h) => `@${h}`).join(', ')} from operators` : '']
    editor.note('update', phase, detail.filter(Boolean).join('; '))
  }
}

function setAutoAdvance(editor: Editor, phase: Phase, value: boolean): void {
  if (phase.autoAdvance === value) return
  phase.autoAdvance = value
  editor.note('update', phase, value ? 'advances automatically' : 'waits for an operator')
}

const HANDLES = String.raw`((?:@[\p{L}\p{N}_.-]+(?:['’]s)?(?:\s*,\s*|\s+and\s+|\s+)?)+)`

const HANDLERS: Handler[] = [
  // operators
  [new RegExp(`^(?:add|include|invite|put)\\s+${HANDLES}\\s*(?:to|on|into|in)\\s+(.+)$`, 'iu'), (e, m, i) => {
    const phase = e.phase(m[2] as string, i)
    if (!phase) return
    setPool(e, phase, handles(m[1] as string), [])
    setAutoAdvance(e, phase, false)
  }],
  [new RegExp(`^(?:remove|drop|delete|take)\\s+${HANDLES}\\s*(?:from|off|out of)\\s+(.+)$`, 'iu'), (e, m, i) => {
    const phase = e.phase(m[2] as string, i)
    if (phase) setPool(e, phase, [], handles(m[1] as string))
  }],
  // gates
  [/^(?:make\s+|let\s+)?(.+?)\s+(?:should\s+|must\s+|to\s+|will\s+)?(?:advance|proceed|continue|move on|run)\s+(?:automatically|on its own|without approval)$/i, (e, m, i) => {
    const phase = e.phase(m[1] as string, i)
    if (phase) setAutoAdvance(e, phase, true)
  }],
  [/^(?:make\s+)?(.+?)\s+(?:should\s+)?(?:be\s+)?(?:auto-?advance|automatic|auto-?advancing)$/i, (e, m, i) => {
    const phase = e.phase(m[1] as string, i)
    if (phase) setAutoAdvance(e, phase, true)
  }],
  [/^(?:make\s+)?(.+?)\s+(?:should\s+|must\s+)?(?:wait\s+(?:for|on|until)|require|requires|need|needs)\s+(.+)$/i, (e, m, i) => {
    const phase = e.phase(m[1] as string, i)
    if (!phase) return
    setPool(e, phase, handles(m[2] as string), [])
    setAutoAdvance(e, phase, false)
  }],
  [/^(?:make\s+)?(.+?)\s+(?:should\s+)?(?:be\s+)?(?:manual|gated)$/i, (e, m, i) => {
    const phase = e.phase(m[1] as string, i)
    if (phase) setAutoAdvance(e, phase, false)
  }],
  // trigger and description
  [/^(?:change|set|update|make)\s+the\s+trigger\s+(?:to|as)\s+(.+)$/i, (e, m) => {
    e.triggerName = triggerFromPhrase(m[1] as string).name
  }],
  [/^(?:trigger|run|start)\s+(?:it|the cycle|this|this cycle)\s+((?:when|whenever|each time|every|once|on)\s+.+)$/i, (e, m) => {
    e.triggerName = triggerFromPhrase(m[1] as string).name
  }],
  [/^make\s+(?:it|the cycle|this)\s+manual$/i, (e) => {
    e.triggerName = 'manual'
  }],
  [/^(?:describe\s+(?:it|the cycle|this|this cycle)\s+as|(?:change|set|update)\s+the\s+description\s+to)\s+(.+)$/i, (e, m) => {
    e.description = unquote(m[1] as string)
  }],
  // rename
  [/^(?:rename|retitle)\s+(.+?)\s+(?:to|as|into)\s+(.+)$/i, (e, m, i) => {
    const phase = e.phase(m[1] as string, i)
    if (!phase) return
    const name = unquote(m[2] as string).slice(0, 60)
    e.note('update', phase, `renamed "${phase.phaseName}" to "${name}"`)
    phase.phaseName = name
  }],
  [/^change\s+the\s+name\s+of\s+(.+?)\s+to\s+(.+)$/i, (e, m, i) => {
    const phase = e.phase(m[1] as string, i)
    if (!phase) return
    const name = unquote(m[2] as string).slice(0, 60)
    e.note('update', phase, `renamed "${phase.phaseName}" to "${name}"`)
    phase.phaseName = name
  }],
  [/^call\s+(.+)$/i, (e, m, i) => {
    const [index, rest] = splitNameAndRest(e, m[1] as string)
    const phase = e.phases[index]
    if (!phase || !rest) {
      e.warnings.push({ code: 'unknown-phase', detail: `No phase matches in "${i}"; that instruction changed nothing.` })
      return
    }
    const name = unquote(rest).slice(0, 60)
    e.note('update', phase, `renamed "${phase.phaseName}" to "${name}"`)
    phase.phaseName = name
  }],
  // reassign
  [/^(?:assign|reassign|give|hand(?:\s+over)?)\s+(.+?)\s+to\s+(.+)$/i, (e, m, i) => reassign(e, m[1] as string, m[2] as string, i)],
  [/^(?:let|have|make)\s+(.+?)\s+(?:handle|take(?:\s+over)?|do|run|own|perform)\s+(.+)$/i, (e, m, i) => reassign(e, m[2] as string, m[1] as string, i)],
  [/^use\s+(.+?)\s+for\s+(.+)$/i, (e, m, i) => reassign(e, m[2] as string, m[1] as string, i)],
  [/^(.+?)\s+should\s+be\s+(?:handled|done|run|owned)\s+by\s+(.+)$/i, (e, m, i) => reassign(e, m[1] as string, m[2] as string, i)],
  // move
  [/^(?:swap|switch|exchange)\s+(.+?)\s+(?:and|with)\s+(.+)$/i, (e, m, i) => {
    const a = e.find(m[1] as string)
    const b = e.find(m[2] as string)
    if (a === -1 || b === -1) {
      e.phase(a === -1 ? (m[1] as string) : (m[2] as string), i)
      return
    }
    if (a === b) return
    const [first, second] = [e.phases[a] as Phase, e.phases[b] as Phase]
    e.phases[a] = second
    e.phases[b] = first
    e.note('move', first, `moved to position ${b + 1}`)
    e.note('move', second, `moved to position ${a + 1}`)
  }],
  [/^move\s+(.+?)\s+to\s+the\s+(end|bottom|last position|start|beginning|top|front|first position)$/i, (e, m, i) => {
    const from = e.find(m[1] as string)
    if (from === -1) return void e.phase(m[1] as string, i)
    const to = /end|bottom|last/i.test(m[2] as string) ? e.phases.length - 1 : 0
    movePhase(e, from, to)
  }],
  [/^move\s+(.+?)\s+(?:to\s+)?(?:position|place|slot)\s+(\d+)$/i, (e, m, i) => {
    const from = e.find(m[1] as string)
    if (from === -1) return void e.phase(m[1] as string, i)
    movePhase(e, from, Math.min(Math.max(Number(m[2]) - 1, 0), e.phases.length - 1))
  }],
  [/^move\s+(.+?)\s+(before|after)\s+(.+)$/i, (e, m, i) => {
    const from = e.find(m[1] as string)
    const target = e.find(m[3] as string)
    if (from === -1 || target === -1) return void e.phase(from === -1 ? (m[1] as string) : (m[3] as string), i)
    const phase = e.phases[from] as Phase
    const anchor = e.phases[target] as Phase
    if (phase === anchor) return
    e.phases.splice(from, 1)
    const anchorAt = e.phases.indexOf(anchor)
    const to = (m[2] as string).toLowerCase() === 'before' ? anchorAt : anchorAt + 1
    e.phases.splice(to, 0, phase)
    if (to !== from) e.note('move', phase, `moved to position ${to + 1}`)
  }],
  // add
  [/^(?:start|begin|open)\s+(?:by|with)\s+(.+)$/i, (e, m) => e.insert(0, m[1] as string)],
  [/^(?:finish|end|close|conclude|wrap\s+up)\s+(?:by|with)\s+(.+)$/i, (e, m) => e.insert(e.phases.length, m[1] as string)],
  [/^(?:add|insert|append|include)\s+(.+)$/i, (e, m, i) => addPhase(e, m[1] as string, i)],
  // remove
  [/^(?:remove|drop|delete|skip|cut)\s+(.+)$/i, (e, m, i) => {
    const index = e.find(m[1] as string)
    if (index === -1) return void e.phase(m[1] as string, i)
    const [phase] = e.phases.splice(index, 1) as [Phase]
    e.note('remove', phase, `removed "${phase.phaseName}"`)
  }],
]

function reassign(editor: Editor, phaseRef: string, agentRef: string, instruction: string): void {
  const phase = editor.phase(phaseRef, instruction)
  if (!phase) return
  const agentId = editor.agentId(agentRef, instruction)
  if (agentId === null || agentId === phase.agentId) return
  phase.agentId = agentId
  editor.note('update', phase, agentId === NIL_UUID ? 'unassigned' : `assigned to ${unquote(agentRef)}`)
}

function movePhase(editor: Editor, from: number, to: number): void {
  if (from === to) return
  const [phase] = editor.phases.splice(from, 1) as [Phase]
  editor.phases.splice(to, 0, phase)
  editor.note('move', phase, `moved to position ${to + 1}`)
}

export function refineCycle(prompt: string, current: CycleDefinition, context: DraftContext): DraftOutcome {
  const editor = new Editor(current, context)
  for (const instruction of instructions(prompt)) {
    const handler = HANDLERS.find(([pattern]) => pattern.test(instruction))
    if (!handler) {
      editor.warnings.push({ code: 'not-understood', detail: `Could not understand "${instruction}"; it changed nothing.` })
      continue
    }
    handler[1](editor, handler[0].exec(instruction) as RegExpExecArray, instruction)
  }
  return {
    draft: { triggerName: editor.triggerName, description: editor.description, phasesTemplate: editor.phases },
    changes: editor.changeList(),
    warnings: editor.warnings,
  }
}
