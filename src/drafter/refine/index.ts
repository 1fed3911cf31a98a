// Refine mode of the builtin engine: edit instructions applied in order to `current` (CONVENTIONS.md,
// Refine). Phases no instruction touches stay exactly as they were, ids included. One module per
// instruction family; "it" in an instruction is the phase the previous one touched.
import type { CycleDefinition } from '../../cycles/schemas.js'
import type { DraftContext, DraftOutcome } from '../generate.js'
import { ADD, insertPlacedWork } from './add.js'
import { Editor, type Handler } from './editor.js'
import { GATES } from './gate.js'
import { instructions, MAX_INSTRUCTIONS } from './instructions.js'
import { MOVES } from './move.js'
import { REASSIGN } from './reassign.js'
import { REMOVE } from './remove.js'
import { RENAME } from './rename.js'
import { TRIGGER } from './trigger.js'

// Order matters where wordings overlap: operators before add/remove ("Add @li to Review"), the trigger
// before gates ("Make it manual"), rename before reassign ("Call …"), add before move ("Put a QA phase before …").
const HANDLERS: Handler[] = [...TRIGGER, ...GATES, ...RENAME, ...REASSIGN, ...ADD, ...MOVES, ...REMOVE]

export function refineCycle(prompt: string, current: CycleDefinition, context: DraftContext): DraftOutcome {
  const editor = new Editor(current, context)
  const { read, ignored } = instructions(prompt)
  for (const instruction of read) {
    const handler = HANDLERS.find(([pattern]) => pattern.test(instruction))
    if (!handler) {
      if (insertPlacedWork(editor, instruction)) continue
      editor.warnings.push({ code: 'not-understood', detail: `Could not understand "${instruction.slice(0, 400)}"; it changed nothing.` })
      continue
    }
    handler[1](editor, handler[0].exec(instruction) as RegExpExecArray, instruction)
  }
  if (ignored > 0) {
    editor.warnings.push({ code: 'too-many-instructions', detail: `A refine reads at most ${MAX_INSTRUCTIONS} instructions; the ${ignored} after them were ignored.` })
  }
  return {
    draft: { triggerName: editor.triggerName, description: editor.description, phasesTemplate: editor.phases },
    changes: editor.changeList(),
    warnings: editor.warnings,
  }
}
