// move: "Move Review before Draft", "Swap the first and second phases", "Move it to the end",
// "Put Publish before Write newsletter", "Move phase 4 to position 1".
import type { Phase } from '../../cycles/schemas.js'
import type { Editor, Handler } from './editor.js'

function movePhase(editor: Editor, from: number, to: number): void {
  const phase = editor.phases[from] as Phase
  editor.touched = phase
  if (from === to) return
  editor.phases.splice(from, 1)
  editor.phases.splice(to, 0, phase)
  editor.note('move', phase, `moved to position ${to + 1}`)
}

const MOVE = '(?:move|put|place|shift)'

export const MOVES: Handler[] = [
  [/^(?:swap|switch|exchange)\s+(.+?)\s+(?:and|with)\s+(.+)$/i, (e, m, i) => {
    const a = e.find(m[1] as string)
    const b = e.find(m[2] as string)
    if (a === -1 || b === -1) return void e.phase(a === -1 ? (m[1] as string) : (m[2] as string), i)
    if (a === b) return
    const [first, second] = [e.phases[a] as Phase, e.phases[b] as Phase]
    e.phases[a] = second
    e.phases[b] = first
    e.note('move', second, `moved to position ${a + 1}`)
    e.note('move', first, `moved to position ${b + 1}`)
  }],
  [new RegExp(`^${MOVE}\\s+(.+?)\\s+(?:to|at)\\s+the\\s+(end|bottom|last position|start|beginning|top|front|first position)$`, 'i'), (e, m, i) => {
    const from = e.find(m[1] as string)
    if (from === -1) return void e.phase(m[1] as string, i)
    movePhase(e, from, /end|bottom|last/i.test(m[2] as string) ? e.phases.length - 1 : 0)
  }],
  [new RegExp(`^${MOVE}\\s+(.+?)\\s+(?:to\\s+|in\\s+|at\\s+)?(?:position|place|slot)\\s+(\\d+)$`, 'i'), (e, m, i) => {
    const from = e.find(m[1] as string)
    if (from === -1) return void e.phase(m[1] as string, i)
    movePhase(e, from, Math.min(Math.max(Number(m[2]) - 1, 0), e.phases.length - 1))
  }],
  [new RegExp(`^${MOVE}\\s+(.+?)\\s+(before|after)\\s+(.+)$`, 'i'), (e, m, i) => {
    const from = e.find(m[1] as string)
    const target = e.find(m[3] as string)
    if (from === -1 || target === -1) return void e.phase(from === -1 ? (m[1] as string) : (m[3] as string), i)
    const phase = e.phases[from] as Phase
    const anchor = e.phases[target] as Phase
    e.touched = phase
    if (phase === anchor) return
    e.phases.splice(from, 1)
    const anchorAt = e.phases.indexOf(anchor)
    const to = (m[2] as string).toLowerCase() === 'before' ? anchorAt : anchorAt + 1
    e.phases.splice(to, 0, phase)
    if (to !== from) e.note('move', phase, `moved to position ${to + 1}`)
  }],
]
