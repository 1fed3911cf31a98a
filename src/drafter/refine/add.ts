// add: "Add a step after Reply to send a survey", "Insert a QA phase before Publish", "Finish with a
// summary by Analyst", "Start by translating the ticket", "Add a research step at the beginning".
import { words } from '../../text/language.js'
import { MAX_REFERENCE_LENGTH } from '../../text/language.js'
import type { Editor, Handler } from './editor.js'

const PHASE_WORD = /\b(?:steps?|phases?|stages?)\b/i
const AT_START = /\s+(?:at|to)\s+the\s+(?:beginning|start|top|front)$/i
const AT_END = /\s+(?:at|to)\s+the\s+(?:end|bottom|finish)$/i

function addPhase(editor: Editor, text: string, instruction: string): void {
  let rest = text
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
  let tail = keyword ? rest.slice(keyword.index + keyword[0].length).trim() : ''
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
    editor.warnings.push({ code: 'not-understood', detail: `"${instruction.slice(0, 2 * MAX_REFERENCE_LENGTH)}" does not say what the new phase does; nothing was added.` })
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

export const ADD: Handler[] = [
  [/^(?:start|begin|open)\s+(?:by|with)\s+(.+)$/i, (e, m) => e.insert(0, m[1] as string)],
  [/^(?:finish|end|close|conclude|wrap\s+up)\s+(?:by|with)\s+(.+)$/i, (e, m) => e.insert(e.phases.length, m[1] as string)],
  [/^(?:add|insert|append|include)\s+(.+)$/i, (e, m, i) => addPhase(e, m[1] as string, i)],
  // "Put a research phase before Pull metrics" (but "Put Publish before …" moves a phase).
  [/^(?:put|place)\s+((?:an?|another|one|a new)\s+.+)$/i, (e, m, i) => addPhase(e, m[1] as string, i)],
]
