// A refine prompt → its instructions, in order: sentences (abbreviation-aware), split again where a
// clause starts with an instruction verb ("Assign X to Y and make it wait for @z"), at most
// MAX_INSTRUCTIONS of them; fronted clauses are turned round ("Before Publish, add a step …").
import { collapseSpaces, splitSentences } from '../../text/language.js'

/** A refine reads at most this many instructions; the rest are ignored with a warning. */
export const MAX_INSTRUCTIONS = 100

const INSTRUCTION_VERBS =
  'add|insert|append|include|invite|put|remove|drop|delete|skip|cut|take|get|eliminate|rename|retitle|call|assign|reassign|give|hand|pass|let|have|use|move|place|shift|swap|switch|exchange|make|finish|end|start|begin|change|set|update|describe|trigger'
const INSTRUCTION_SPLIT = new RegExp(`\\s*(?:,\\s*(?:and\\s+)?(?:then\\s+)?|\\s+and\\s+(?:then\\s+)?|;\\s*)(?=(?:${INSTRUCTION_VERBS})\\b)`, 'i')
const LEADING_SEQUENCE = /^(?:then|and then|also|next|finally|and|after that|afterwards|lastly),?\s+/i

// "Before Publish, add a step to check the links" → "add a step before Publish to check the links";
// "After Proofread, insert a translation step" → "insert a translation step after Proofread".
const FRONTED_ADD = /^(before|after)\s+([^,]{1,200}),\s*(add|insert|put|include|append)\s+(.*?\b(?:step|phase|stage))\b\s*(.*)$/i
// "For the first phase, use Translator" → "use Translator for the first phase".
const FRONTED_FOR = /^for\s+([^,]{1,200}),\s*(use|assign|let|have)\s+(.+)$/i

// "Before Pull metrics, research industry benchmarks" → "add a step before Pull metrics to research …" (a
// clause that is itself an edit — "After Proofread, make Publish wait for @tom" — is left as it is).
const FRONTED_PLACEMENT = /^(?:(?:just|right|directly|immediately)\s+)?(before|after)\s+([^,]{1,200}),\s*(.+)$/i
const ADD_VERB = /^(?:add|insert|append|include)\b/i
const EDIT_VERB = /^(?:remove|drop|delete|skip|cut|rename|retitle|assign|reassign|move|shift|swap|switch|make|change|set|use|put|place|describe|trigger)\b/i
const NOT_A_PHASE = /^(?:it|this|that|they|them|the\s+(?:cycle|run))\b/i

function turnRound(instruction: string): string {
  const add = FRONTED_ADD.exec(instruction)
  if (add) return `${add[3]} ${add[4]} ${add[1]} ${add[2]}${add[5] ? ` ${add[5]}` : ''}`
  const placed = FRONTED_PLACEMENT.exec(instruction)
  if (placed && !NOT_A_PHASE.test(placed[2] as string)) {
    const [, where, reference, clause] = placed as unknown as [string, string, string, string]
    if (ADD_VERB.test(clause)) return `${clause} ${where} ${reference}`
    if (!EDIT_VERB.test(clause)) return `add a step ${where} ${reference} to ${clause}`
  }
  const forClause = FRONTED_FOR.exec(instruction)
  if (forClause) return /^(?:use)$/i.test(forClause[2] as string) ? `use ${forClause[3]} for ${forClause[1]}` : `${forClause[2]} ${forClause[1]} to ${forClause[3]}`
  return instruction
}

/** The instructions of a refine prompt, in order, and how many were left unread past the cap. */
export function instructions(prompt: string): { read: string[]; ignored: number } {
  const read: string[] = []
  let ignored = 0
  for (const sentence of splitSentences(collapseSpaces(prompt))) {
    for (const part of turnRound(sentence.replace(LEADING_SEQUENCE, '')).split(INSTRUCTION_SPLIT)) {
      const instruction = part.trim().replace(LEADING_SEQUENCE, '').replace(/[.!?]+$/, '').trim()
      if (instruction.length === 0) continue
      if (read.length < MAX_INSTRUCTIONS) read.push(instruction)
      else ignored++
    }
  }
  return { read, ignored }
}
