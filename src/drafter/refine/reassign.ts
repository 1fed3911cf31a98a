// reassign: "Assign Reply to Editor", "Let Translator handle the first phase", "Hand off Triage to
// Helpdesk Copilot", "Publish should be handled by Copywriter", "Use Editor for the second step".
import { NIL_UUID } from '../../http/schemas.js'
import { unquote, type Editor, type Handler } from './editor.js'

function reassign(editor: Editor, phaseRef: string, agentRef: string, instruction: string): void {
  const phase = editor.phase(phaseRef, instruction)
  if (!phase) return
  const agentId = editor.agentId(agentRef, instruction)
  if (agentId === null || agentId === phase.agentId) return
  phase.agentId = agentId
  editor.note('update', phase, agentId === NIL_UUID ? 'unassigned' : `assigned to ${unquote(agentRef).slice(0, 200)}`)
}

export const REASSIGN: Handler[] = [
  [/^(?:assign|reassign|give|pass|hand(?:\s+(?:over|off))?)\s+(.+?)\s+(?:over\s+|off\s+)?to\s+(.+)$/i, (e, m, i) => reassign(e, m[1] as string, m[2] as string, i)],
  [/^(?:let|have|make)\s+(.+?)\s+(?:handle|take(?:\s+over)?|do|run|own|perform)\s+(.+)$/i, (e, m, i) => reassign(e, m[2] as string, m[1] as string, i)],
  [/^use\s+(.+?)\s+for\s+(.+)$/i, (e, m, i) => reassign(e, m[2] as string, m[1] as string, i)],
  [/^(.+?)\s+should\s+be\s+(?:handled|done|run|owned|performed|taken)\s+by\s+(.+)$/i, (e, m, i) => reassign(e, m[1] as string, m[2] as string, i)],
]
