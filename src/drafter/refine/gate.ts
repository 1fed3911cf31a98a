// gate: "Make Publish wait for @dana's approval", "Reply should advance automatically", "Add @li to the
// Review operators", "Remove @sam from Review", "Sign off on Draft reply with @kim", "Have @lee approve it".
import type { Phase } from '../../cycles/schemas.js'
import { capOperators } from '../generate.js'
import { handles } from '../../text/language.js'
import type { Editor, Handler } from './editor.js'

// A sentence of the instructions saying who approves the step ("@lee approves it.", "@lee and @kim review the
// draft."), as a draft writes it from the prompt's words: its handles, its verb and the rest of it.
const APPROVAL_SENTENCE = /(^|[.!?]\s+)((?:@[\p{L}\p{N}_.-]+?(?:\s*,\s*|\s+and\s+)?)+)\s+(approves?|reviews?|signs?\s+off|checks?|confirms?|okays?)\b([^.!?]*[.!?])/iu

// "@a, @b and @c" (British English: no comma before "and", as the drafter's other texts write lists).
const handleList = new Intl.ListFormat('en-GB', { type: 'conjunction' })
const listHandles = (pool: string[]) => handleList.format(pool.map((h) => `@${h}`))

/** The verb for one approver ("approves", "signs off") or several ("approve", "sign off"). */
function agree(verb: string, several: boolean): string {
  const [first, ...rest] = verb.split(/\s+/)
  const base = (first as string).replace(/s$/i, '')
  return [several ? base : `${base}s`, ...rest].join(' ')
}

/** After the operators change, the instructions' sentence naming the approvers names the new ones (or goes, with none). */
function restateApprovers(phase: Phase): void {
  const match = APPROVAL_SENTENCE.exec(phase.instructions)
  if (!match) return
  const [whole, lead, , verb, rest] = match as unknown as [string, string, string, string, string]
  const sentence = phase.operatorPool.length === 0 ? '' : `${lead}${listHandles(phase.operatorPool)} ${agree(verb, phase.operatorPool.length > 1)}${rest}`
  const restated = phase.instructions.slice(0, match.index) + (sentence || lead.trimEnd()) + phase.instructions.slice(match.index + whole.length)
  phase.instructions = restated.trim() || phase.instructions
}

function setPool(editor: Editor, phase: Phase, add: string[], remove: string[]): void {
  const before = phase.operatorPool.join(',')
  const pool = new Set(phase.operatorPool)
  for (const handle of add) pool.add(handle)
  phase.operatorPool = capOperators([...pool].filter((h) => !remove.includes(h)), editor.warnings, `"${phase.phaseName}"`)
  if (phase.operatorPool.join(',') !== before) {
    restateApprovers(phase)
    const detail = [add.length ? `added ${add.map((h) => `@${h}`).join(', ')} to operators` : '', remove.length ? `removed ${remove.map((h) => `@${h}`).join(', ')} from operators` : '']
    editor.note('update', phase, detail.filter(Boolean).join('; '))
  }
}

export function setAutoAdvance(editor: Editor, phase: Phase, value: boolean): void {
  if (phase.autoAdvance === value) return
  phase.autoAdvance = value
  editor.note('update', phase, value ? 'advances automatically' : 'waits for an operator')
}

function gate(editor: Editor, reference: string, operators: string, instruction: string): void {
  const phase = editor.phase(reference, instruction)
  if (!phase) return
  setPool(editor, phase, handles(operators), [])
  setAutoAdvance(editor, phase, false)
}

const HANDLES = String.raw`((?:@[\p{L}\p{N}_.-]+(?:['’]s)?(?:\s*,\s*|\s+and\s+|\s+)?)+)`
const APPROVES = String.raw`(?:to\s+)?(?:approves?|signs?\s+off\s+on|sign-?offs?\s+on|reviews?|checks?|confirms?|okays?)`

export const GATES: Handler[] = [
  [new RegExp(`^(?:add|include|invite|put)\\s+${HANDLES}\\s*(?:to|on|into|in)\\s+(.+)$`, 'iu'), (e, m, i) => gate(e, m[2] as string, m[1] as string, i)],
  [new RegExp(`^(?:remove|drop|delete|take)\\s+${HANDLES}\\s*(?:from|off|out of)\\s+(.+)$`, 'iu'), (e, m, i) => {
    const phase = e.phase(m[2] as string, i)
    if (phase) setPool(e, phase, [], handles(m[1] as string))
  }],
  // "Have @lee approve Draft reply", "@lee signs off on Publish"
  [new RegExp(`^(?:have\\s+|let\\s+|ask\\s+|get\\s+)?${HANDLES}\\s*${APPROVES}\\s+(.+)$`, 'iu'), (e, m, i) => gate(e, m[2] as string, m[1] as string, i)],
  // "Sign off on Draft reply with @kim (before it goes out)"
  [new RegExp(`^(?:sign\\s*-?\\s*off|approve)\\s+(?:on\\s+)?(.+?)\\s+(?:with|by)\\s+${HANDLES}(?:\\s+before\\b.*)?$`, 'iu'), (e, m, i) => gate(e, m[1] as string, m[2] as string, i)],
  [/^(?:make\s+|let\s+)?(.+?)\s+(?:should\s+|must\s+|to\s+|will\s+|can\s+)?(?:advance|proceed|continue|move on|run)\s+(?:automatically|on its own|by itself|without approval)$/i, (e, m, i) => {
    const phase = e.phase(m[1] as string, i)
    if (phase) setAutoAdvance(e, phase, true)
  }],
  [/^(?:make\s+)?(.+?)\s+(?:should\s+)?(?:be\s+)?(?:auto-?advance|automatic|auto-?advancing)$/i, (e, m, i) => {
    const phase = e.phase(m[1] as string, i)
    if (phase) setAutoAdvance(e, phase, true)
  }],
  [/^(?:make\s+)?(.+?)\s+(?:should\s+|must\s+)?(?:wait\s+(?:for|on|until)|require|requires|need|needs)\s+(.+)$/i, (e, m, i) => gate(e, m[1] as string, m[2] as string, i)],
  [/^(?:make\s+)?(.+?)\s+(?:should\s+)?(?:be\s+)?(?:manual|gated)$/i, (e, m, i) => {
    const phase = e.phase(m[1] as string, i)
    if (phase) setAutoAdvance(e, phase, false)
  }],
]
