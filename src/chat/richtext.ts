// Renderings of rich-text content: plain text, HTML (every character of text escaped) and Markdown
// (every character that would change the meaning escaped). Paragraphs are lines; blocks are separated
// by a blank line.
import escapeHtml from 'escape-html'
import type { Content, TextRun } from './schemas.js'

/** Characters of text in the whole content, counted in code points (as JSON Schema counts lengths). */
export function textLength(content: Content): number {
  let length = 0
  for (const block of content.blocks)
    for (const paragraph of block.elements)
      for (const run of paragraph.children) {
        for (const _ of run.text) length++
      }
  return length
}

export function renderText(content: Content): string {
  return content.blocks
    .map((block) => block.elements.map((paragraph) => paragraph.children.map((run) => run.text).join('')).join('\n'))
    .join('\n\n')
}

function htmlRun(run: TextRun): string {
  let html = escapeHtml(run.text).replace(/\r\n|\r|\n/g, '<br>')
  const style = run.style ?? {}
  if (style.code) html = `<code>${html}</code>`
  if (style.strikethrough) html = `<s>${html}</s>`
  if (style.italic) html = `<em>${html}</em>`
  if (style.bold) html = `<strong>${html}</strong>`
  return html
}

export function renderHtml(content: Content): string {
  return content.blocks
    .map((block) => {
      const paragraphs = block.elements.map((p) => `<p${p.direction ? ` dir="${p.direction}"` : ''}>${p.children.map(htmlRun).join('')}</p>`)
      return `<div class="rich-text">${paragraphs.join('')}</div>`
    })
    .join('\n')
}

// CommonMark lets a backslash escape any ASCII punctuation, so escaping every character that can start
// or end markup is always safe; digits-then-dot or -paren at a line start would begin a list.
const MARKDOWN_SPECIAL = /[\\`*_{}[\]()<>#+\-!|~&.=:"']/g

function escapeMarkdown(text: string): string {
  return text.replace(MARKDOWN_SPECIAL, '\\$&')
}

function markdownCode(text: string): string {
  const longestRun = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length))
  const fence = '`'.repeat(longestRun + 1)
  const pad = text.startsWith('`') || text.endsWith('`') || (text.startsWith(' ') && text.endsWith(' ') && text.trim() !== '') ? ' ' : ''
  return `${fence}${pad}${text}${pad}${fence}`
}

function markdownRun(run: TextRun): string {
  const style = run.style ?? {}
  // Emphasis cannot open or close next to white space: keep it outside the markers.
  const [, lead = '', core = '', trail = ''] = /^(\s*)([\s\S]*?)(\s*)$/.exec(run.text) ?? []
  if (core === '') return escapeMarkdown(run.text).replace(/\r\n|\r|\n/g, '\\\n')
  let md = style.code ? markdownCode(core.replace(/\r\n|\r|\n/g, ' ')) : escapeMarkdown(core).replace(/\r\n|\r|\n/g, '\\\n')
  if (style.strikethrough) md = `~~${md}~~`
  if (style.italic) md = `*${md}*`
  if (style.bold) md = `**${md}**`
  return `${escapeMarkdown(lead)}${md}${escapeMarkdown(trail)}`
}

const styleKey = (run: TextRun) => ['bold', 'italic', 'strikethrough', 'code'].map((k) => (run.style?.[k as keyof typeof run.style] ? 1 : 0)).join('')

/** Neighbouring runs of one style become one: adjacent markers (`a``b`, **a****b**) would fuse. */
function coalesce(runs: TextRun[]): TextRun[] {
  const merged: TextRun[] = []
  for (const run of runs) {
    const last = merged[merged.length - 1]
    if (last && styleKey(last) === styleKey(run)) merged[merged.length - 1] = { ...last, text: last.text + run.text }
    else merged.push(run)
  }
  return merged
}

/** Leading white space would start an indented code block or vanish: write it as character references. */
function keepLeadingSpace(paragraph: string): string {
  return paragraph.replace(/(^|\n)([ \t]+)/g, (_, start: string, space: string) => start + space.replace(/ /g, '&#32;').replace(/\t/g, '&#9;'))
}

export function renderMarkdown(content: Content): string {
  return content.blocks
    .map((block) => block.elements.map((p) => keepLeadingSpace(coalesce(p.children).map(markdownRun).join(''))).join('\n\n'))
    .join('\n\n')
}
