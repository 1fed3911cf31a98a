// Read-only rendering of rich-text content (docs/api-contract.md) as React elements (no HTML strings: nothing to escape or inject);
// mentions (`@handle`) are highlighted, more strongly when they name the reader.
import type { ReactNode } from 'react'
import type { Content, TextRun } from './mapping'

// A handle after a start or a non-word character (so "a@b.org" is not a mention).
const MENTION = /(^|[^\w@])(@[A-Za-z0-9][\w.-]*[\w])/g

function withMentions(text: string, me: string | undefined, line: number): ReactNode[] {
  const nodes: ReactNode[] = []
  let last = 0
  for (const match of text.matchAll(MENTION)) {
    const start = match.index + match[1]!.length
    if (start > last) nodes.push(text.slice(last, start))
    const handle = match[2]!
    const mine = me !== undefined && handle.slice(1).toLowerCase() === me.toLowerCase()
    nodes.push(<mark key={`${line}-${start}`} className={mine ? 'mention me' : 'mention'}>{handle}</mark>)
    last = start + handle.length
  }
  if (last < text.length) nodes.push(text.slice(last))
  return nodes
}

function renderRun(run: TextRun, key: number, me: string | undefined): ReactNode {
  let node: ReactNode = run.text.split('\n').flatMap((piece, i) => {
    const text = run.style?.code ? [piece] : withMentions(piece, me, i)
    return i === 0 ? text : [<br key={`br${i}`} />, ...text]
  })
  if (run.style?.code) node = <code>{node}</code>
  if (run.style?.strikethrough) node = <s>{node}</s>
  if (run.style?.italic) node = <em>{node}</em>
  if (run.style?.bold) node = <strong>{node}</strong>
  return <span key={key}>{node}</span>
}

export function RichText({ content, me }: { content: Content; me?: string }) {
  return (
    <>
      {content.blocks.map((block, b) => (
        <div className="rich-text" key={b}>
          {block.elements.map((paragraph, p) => (
            <p key={p} dir={paragraph.direction}>{paragraph.children.map((run, i) => renderRun(run, i, me))}</p>
          ))}
        </div>
      ))}
    </>
  )
}
