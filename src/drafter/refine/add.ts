// add: "Add a step after Reply to send a survey", "Insert a QA phase before Publish", "Finish with a
// summary by Analyst", "Start by translating the ticket", "Add a research step at the beginning",
// "Add a review step between Write newsletter and Proofread, handled by Editor", and work placed by a
// trailing clause ("Research benchmarks before Pull metrics"; fronted ones are turned round in instructions.ts).
import { isVerb, MAX_REFERENCE_LENGTH, words } from '../../text/language.js'
import type { Editor, Handler } from './editor.js'

const PHASE_WORD = /\b(?:steps?|phases?|stages?)\b/i
const AT_START = /\s+(?:at|to)\s+the\s+(?:beginning|start|top|front)$/i
const AT_END = /\s+(?:at|to)\s+the\s+(?:end|bottom|finish)$/i
// "…, handled by Editor", "… assigned to Analyst", "…, to be done by Translator": who does the new phase.
const ASSIGNMENT = /(?:,\s*|\s+)(?:to\s+be\s+)?(?:(?:handled|done|owned|run|performed|carried\s+out|taken\s+on|taken)\s+by|(?:assigned|given)\s+to)\s+([^,]{1,200}?)\s*(?=,|$)/i

/** The text without its assignment clause, and the agent that clause names (undefined: none, or an unknown agent, warned). */
function assignment(editor: Editor, text: string, instruction: string): { text: string; agentId?: string } {
  const match = ASSIGNMENT.exec(text)
  if (!match) return { text }
  const rest = `${text.slice(0, match.index)}${text.slice(match.index + match[0].length)}`.trim()
  const agentId = editor.agentId(match[1] as string, instruction)
  return agentId === null ? { text: rest } : { text: rest, agentId }
}

function insertWork(editor: Editor, at: number, text: string, instruction: string): void {
  const { text: step, agentId } = assignment(editor, text, instruction)
  editor.insert(at, step, agentId)
}

function addPhase(editor: Editor, text: string, instruction: string): void {
  const assigned = assignment(editor, text, instruction)
  let rest = assigned.text
  let at = editor.phases.length
  if (AT_START.test(rest)) {
    at = 0
    rest = rest.replace(AT_START, '')
  } else if (AT_END.test(rest)) {
    rest = rest.replace(AT_END, '')
  }
  // "a step after Draft reply to proofread the reply" | "a QA phase before Publish" | "a final step to …" | "a summary by Analyst"
  const keyword = PHASE_WORD.exec(rest)
  let descriptor = keyword ? rest.slice(0, keyword.index) : rest
  let tail = keyword ? rest.slice(keyword.index + keyword[0].length).trim().replace(/^,\s*/, '') : ''
  if (!keyword) {
    const position = /\s+(before|after|between)\s+/i.exec(rest)
    if (position) {
      descriptor = rest.slice(0, position.index)
      tail = rest.slice(position.index).trim()
    }
  }
  if (words(descriptor).some((w) => w === 'first' || w === 'initial')) at = 0
  descriptor = descriptor.replace(/^\s*(?:a|an|one|another|new|extra|final|last|first|initial)\b\s*/gi, '').replace(/^\s*(?:a|an|new|final|last|first)\b\s*/gi, '').trim()
  let step = descriptor
  const placed = /^(before|after)\s+(.+)$/i.exec(tail)
  const between = /^between\s+(.+?)\s+and\s+(.+)$/i.exec(tail)
  if (between) {
    const [first, second] = [editor.find(between[1] as string), editor.find(between[2] as string)]
    if (first === -1) return void editor.phase(between[1] as string, instruction)
    at = (second === -1 ? first : Math.min(first, second)) + 1
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
    editor.warnings.push({ code: 'not-understood', detail: `"${instruction.slice(0, 2 * MAX_REFERENCE_LENGTH)}" does not say what the new phase does; nothing was added.` })
    return
  }
  editor.insert(at, step, assigned.agentId)
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

const DELEGATION = /^(?:have|let|get|ask)\s+/i
const PLACEMENTS_TRIED = 3

/**
 * Work placed by a trailing clause: "Research industry benchmarks before Pull metrics", "Translate the newsletter
 * into French after Proofread", "Proofread the subject line, before Publish". True when it was such an instruction
 * (the clause names a phase and the rest begins with a verb, or with "have <agent> …").
 */
export function insertPlacedWork(editor: Editor, instruction: string): boolean {
  const { text, agentId } = assignment(editor, instruction, instruction)
  // A phase reference is short: only the last few clauses, and only references of a name's length, are tried.
  const clauses = [...text.matchAll(/,?\s+(?:(?:just|right|directly|immediately)\s+)?(before|after)\s+/gi)].slice(-PLACEMENTS_TRIED).reverse()
  for (const clause of clauses) {
    const work = text.slice(0, clause.index).trim()
    const reference = text.slice((clause.index as number) + clause[0].length)
    if (reference.length > MAX_REFERENCE_LENGTH || !work || !(isVerb(words(work.slice(0, 60))[0]) || DELEGATION.test(work))) continue
    const index = editor.find(reference)
    if (index === -1) continue
    editor.insert((clause[1] as string).toLowerCase() === 'before' ? index : index + 1, work, agentId)
    return true
  }
  return false
}

export const ADD: Handler[] = [
  [/^(?:start|begin|open)\s+(?:by|with)\s+(.+)$/i, (e, m, i) => insertWork(e, 0, m[1] as string, i)],
  [/^(?:finish|end|close|conclude|wrap\s+up)\s+(?:by|with)\s+(.+)$/i, (e, m, i) => insertWork(e, e.phases.length, m[1] as string, i)],
  [/^(?:add|insert|append|include)\s+(.+)$/i, (e, m, i) => addPhase(e, m[1] as string, i)],
  // "Put a research phase before Pull metrics" (but "Put Publish before …" moves a phase).
  [/^(?:put|place)\s+((?:an?|another|one|a new)\s+.+)$/i, (e, m, i) => addPhase(e, m[1] as string, i)],
]
