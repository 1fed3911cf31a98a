// The rich text of docs/api-contract.md ⇄ the editor's ProseMirror document, node for node: a block is a `richTextBlock`, a
// paragraph a `paragraph` (its `direction` an attribute), a run's text is text nodes with the marks bold,
// italic, strike and code, and a newline inside a run is a `hardBreak` carrying the run's marks.
// ProseMirror cannot hold an empty text node or two neighbouring nodes with the same marks, so content is
// first put in canonical form (`normalizeContent`): empty runs dropped, neighbouring runs of the same style
// joined, styles that are false left out. Editor → content → editor is the identity; content → editor →
// content gives the canonical form (test/console/richtext.test.ts checks both with fast-check).
import type { JSONContent } from '@tiptap/core'

export type Direction = 'ltr' | 'rtl'
export interface Style { bold?: boolean; italic?: boolean; strikethrough?: boolean; code?: boolean }
export interface TextRun { type: 'text'; text: string; style?: Style }
export interface Paragraph { type: 'paragraph'; direction?: Direction; children: TextRun[] }
export interface RichTextBlock { type: 'rich_text'; elements: Paragraph[] }
export interface Content { blocks: RichTextBlock[] }

const STYLE_TO_MARK = { bold: 'bold', italic: 'italic', strikethrough: 'strike', code: 'code' } as const
type StyleName = keyof typeof STYLE_TO_MARK
const STYLE_NAMES = Object.keys(STYLE_TO_MARK) as StyleName[]
const MARK_TO_STYLE = Object.fromEntries(STYLE_NAMES.map((name) => [STYLE_TO_MARK[name], name])) as Record<string, StyleName>

function canonicalStyle(style: Style | undefined): Style | undefined {
  const kept: Style = {}
  for (const name of STYLE_NAMES) if (style?.[name]) kept[name] = true
  return Object.keys(kept).length > 0 ? kept : undefined
}

const sameStyle = (a: Style | undefined, b: Style | undefined) => STYLE_NAMES.every((name) => Boolean(a?.[name]) === Boolean(b?.[name]))

function run(text: string, style: Style | undefined): TextRun {
  return style ? { type: 'text', text, style } : { type: 'text', text }
}

export function normalizeContent(content: Content): Content {
  return {
    blocks: content.blocks.map((block) => ({
      type: 'rich_text',
      elements: block.elements.map((paragraph) => {
        const children: TextRun[] = []
        for (const child of paragraph.children) {
          if (child.text === '') continue
          const style = canonicalStyle(child.style)
          const last = children.at(-1)
          if (last && sameStyle(last.style, style)) last.text += child.text
          else children.push(run(child.text, style))
        }
        return paragraph.direction ? { type: 'paragraph', direction: paragraph.direction, children } : { type: 'paragraph', children }
      }),
    })),
  }
}

function marksOf(style: Style | undefined): JSONContent['marks'] {
  const marks = STYLE_NAMES.filter((name) => style?.[name]).map((name) => ({ type: STYLE_TO_MARK[name] }))
  return marks.length > 0 ? marks : undefined
}

function inlineNodes(children: TextRun[]): JSONContent[] {
  const nodes: JSONContent[] = []
  for (const child of normalizeContent({ blocks: [{ type: 'rich_text', elements: [{ type: 'paragraph', children }] }] }).blocks[0]!.elements[0]!.children) {
    const marks = marksOf(child.style)
    child.text.split('\n').forEach((piece, index) => {
      if (index > 0) nodes.push(marks ? { type: 'hardBreak', marks } : { type: 'hardBreak' })
      if (piece !== '') nodes.push(marks ? { type: 'text', text: piece, marks } : { type: 'text', text: piece })
    })
  }
  return nodes
}

/** Content → the editor's document JSON. */
export function contentToDoc(content: Content): JSONContent {
  return {
    type: 'doc',
    // ProseMirror's JSON leaves out empty content arrays.
    content: content.blocks.map((block) => {
      const node: JSONContent = { type: 'richTextBlock' }
      if (block.elements.length > 0) {
        node.content = block.elements.map((paragraph) => {
          const inner: JSONContent = { type: 'paragraph', attrs: { direction: paragraph.direction ?? null } }
          const inline = inlineNodes(paragraph.children)
          if (inline.length > 0) inner.content = inline
          return inner
        })
      }
      return node
    }),
  }
}

function styleOf(marks: JSONContent['marks']): Style | undefined {
  const style: Style = {}
  for (const mark of marks ?? []) {
    const name = MARK_TO_STYLE[mark.type]
    if (name) style[name] = true
  }
  return canonicalStyle(style)
}

/** The editor's document JSON → content, in canonical form. */
export function docToContent(doc: JSONContent): Content {
  const blocks: RichTextBlock[] = (doc.content ?? []).map((block) => ({
    type: 'rich_text',
    elements: (block.content ?? []).map((paragraph) => {
      const direction = paragraph.attrs?.direction as Direction | null | undefined
      const children: TextRun[] = (paragraph.content ?? []).map((node) => run(node.type === 'hardBreak' ? '\n' : (node.text ?? ''), styleOf(node.marks)))
      return direction ? { type: 'paragraph', direction, children } : { type: 'paragraph', children }
    }),
  }))
  return normalizeContent({ blocks })
}

/** Characters of text in all runs (code points), the measure of the server's 40 000 limit. */
export function textLength(content: Content): number {
  let length = 0
  for (const block of content.blocks) for (const paragraph of block.elements) for (const child of paragraph.children) length += [...child.text].length
  return length
}

export const emptyContent = (): Content => ({ blocks: [{ type: 'rich_text', elements: [{ type: 'paragraph', children: [] }] }] })
