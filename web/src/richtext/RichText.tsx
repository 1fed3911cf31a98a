// Read-only rendering of spec 2.4 content as React elements (no HTML strings: nothing to escape or inject).
import type { ReactNode } from 'react'
import type { Content, TextRun } from './mapping'

function renderRun(run: TextRun, key: number): ReactNode {
  let node: ReactNode = run.text.split('\n').flatMap((piece, i) => (i === 0 ? [piece] : [<br key={i} />, piece]))
  if (run.style?.code) node = <code>{node}</code>
  if (run.style?.strikethrough) node = <s>{node}</s>
  if (run.style?.italic) node = <em>{node}</em>
  if (run.style?.bold) node = <strong>{node}</strong>
  return <span key={key}>{node}</span>
}

export function RichText({ content }: { content: Content }) {
  return (
    <>
      {content.blocks.map((block, b) => (
        <div className="rich-text" key={b}>
          {block.elements.map((paragraph, p) => (
            <p key={p} dir={paragraph.direction}>{paragraph.children.map(renderRun)}</p>
          ))}
        </div>
      ))}
    </>
  )
}
