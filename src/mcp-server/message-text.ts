// post_message's text → the chat's rich text: each paragraph (text between blank lines) one `rich_text` block of one
// paragraph, its line breaks kept in the text. `markdown` reads inline emphasis only, by CommonMark's rules
// (markdown-it with only emphasis, strikethrough and code spans on): everything else stays as written; `plain`
// reads nothing. A paragraph whose first strong character is right-to-left is `rtl`. Past MAX_BLOCKS paragraphs,
// the rest join the last block.
import MarkdownIt from 'markdown-it'
import { MAX_BLOCKS, type Content, type TextRun } from '../chat/schemas.js'

const inline = new MarkdownIt('zero').enable(['emphasis', 'strikethrough', 'backticks'])

type Style = NonNullable<TextRun['style']>

// The first strong character decides (Unicode bidi rule P2): Hebrew, Arabic, Syriac, Thaana, N'Ko… are RTL.
const STRONG_RTL = /[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc]/u
const STRONG_LTR = /[\p{L}]/u

function direction(text: string): 'rtl' | undefined {
  for (const char of text) {
    if (STRONG_RTL.test(char)) return 'rtl'
    if (STRONG_LTR.test(char)) return undefined
  }
  return undefined
}

function runsOf(text: string, format: 'markdown' | 'plain'): TextRun[] {
  if (format === 'plain') return [{ type: 'text', text }]
  const runs: TextRun[] = []
  const style: Style = {}
  const push = (content: string, extra: Style = {}) => {
    if (content === '') return
    const merged = { ...style, ...extra }
    runs.push(Object.keys(merged).length ? { type: 'text', text: content, style: merged } : { type: 'text', text: content })
  }
  for (const token of inline.parseInline(text, {})[0]?.children ?? []) {
    if (token.type === 'text') push(token.content)
    else if (token.type === 'softbreak' || token.type === 'hardbreak') push('\n')
    else if (token.type === 'code_inline') push(token.content, { code: true })
    else if (token.type === 'strong_open') style.bold = true
    else if (token.type === 'strong_close') delete style.bold
    else if (token.type === 'em_open') style.italic = true
    else if (token.type === 'em_close') delete style.italic
    else if (token.type === 's_open') style.strikethrough = true
    else if (token.type === 's_close') delete style.strikethrough
  }
  // Adjacent runs of one style join (markdown-it splits text at delimiters it did not pair).
  return runs.reduce<TextRun[]>((joined, run) => {
    const last = joined[joined.length - 1]
    if (last && JSON.stringify(last.style ?? {}) === JSON.stringify(run.style ?? {})) last.text += run.text
    else joined.push({ ...run })
    return joined
  }, [])
}

export function messageContent(text: string, format: 'markdown' | 'plain'): Content {
  const paragraphs = text.replace(/\r\n?/g, '\n').split(/\n(?:[ \t]*\n)+/).map((p) => p.replace(/^\n+|\n+$/g, '')).filter((p) => p.trim() !== '')
  const blocks: Content['blocks'] = []
  for (const paragraph of paragraphs.length ? paragraphs : [text]) {
    const rtl = direction(paragraph)
    const element = { type: 'paragraph' as const, ...(rtl ? { direction: rtl } : {}), children: runsOf(paragraph, format) }
    if (blocks.length < MAX_BLOCKS) blocks.push({ type: 'rich_text', elements: [element] })
    else blocks[MAX_BLOCKS - 1]!.elements.push(element)
  }
  return { blocks }
}
