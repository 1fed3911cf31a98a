// rename: "Rename Triage to Intake", "Call the last phase Wrap-up", "Triage should be called Intake".
import type { Phase } from '../../cycles/schemas.js'
import { unquote, type Editor, type Handler } from './editor.js'

const MAX_PHASE_NAME = 60

function rename(editor: Editor, phase: Phase | null, to: string): void {
  if (!phase) return
  const name = unquote(to).slice(0, MAX_PHASE_NAME)
  editor.note('update', phase, `renamed "${phase.phaseName}" to "${name}"`)
  phase.phaseName = name
}

/** "Call the last phase Wrap-up": the longest leading words that name a phase are the reference. */
function splitNameAndRest(editor: Editor, text: string): [number, string] {
  const parts = text.trim().split(/\s+/)
  // A reference is a few words; beyond that only "the rest" grows.
  for (let k = Math.min(parts.length - 1, 12); k >= 1; k--) {
    const index = editor.find(parts.slice(0, k).join(' '))
    if (index !== -1) return [index, parts.slice(k).join(' ')]
  }
  return [-1, '']
}

export const RENAME: Handler[] = [
  [/^(?:rename|retitle)\s+(.+?)\s+(?:to|as|into)\s+(.+)$/i, (e, m, i) => rename(e, e.phase(m[1] as string, i), m[2] as string)],
  [/^change\s+the\s+(?:name|title)\s+of\s+(.+?)\s+to\s+(.+)$/i, (e, m, i) => rename(e, e.phase(m[1] as string, i), m[2] as string)],
  [/^(.+?)\s+should\s+be\s+(?:called|named|renamed(?:\s+to)?|titled)\s+(.+)$/i, (e, m, i) => rename(e, e.phase(m[1] as string, i), m[2] as string)],
  [/^call\s+(.+)$/i, (e, m, i) => {
    const [index, rest] = splitNameAndRest(e, m[1] as string)
    const phase = e.phases[index]
    if (!phase || !rest) {
      e.warnings.push({ code: 'unknown-phase', detail: `No phase matches in "${i.slice(0, 400)}"; that instruction changed nothing.` })
      return
    }
    e.touched = phase
    rename(e, phase, rest)
  }],
]
