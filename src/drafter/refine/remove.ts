// remove: "Remove the Triage phase", "Drop the second step", "Delete the last phase", "Get rid of
// Publish", "Take out the Draft reply step", "Delete Write newsletter and Publish".
import type { Phase } from '../../cycles/schemas.js'
import type { Editor, Handler } from './editor.js'

function remove(editor: Editor, reference: string, instruction: string): void {
  const index = editor.find(reference)
  if (index === -1) {
    // Several phases at once: every part must name one.
    const parts = reference.split(/\s*,\s*(?:and\s+)?|\s+and\s+/).filter((p) => p.length > 0)
    const targets = parts.length > 1 ? parts.map((p) => editor.phases[editor.find(p)]) : []
    if (targets.length > 1 && targets.every((p) => p !== undefined)) {
      for (const phase of new Set(targets as Phase[])) removePhase(editor, editor.phases.indexOf(phase))
      return
    }
    return void editor.phase(reference, instruction)
  }
  removePhase(editor, index)
}

function removePhase(editor: Editor, index: number): void {
  const [phase] = editor.phases.splice(index, 1) as [Phase]
  editor.note('remove', phase, `removed "${phase.phaseName}"`)
}

export const REMOVE: Handler[] = [
  [/^(?:remove|drop|delete|skip|cut|eliminate|take\s+out|get\s+rid\s+of|do\s+away\s+with)\s+(.+)$/i, (e, m, i) => remove(e, m[1] as string, i)],
]
