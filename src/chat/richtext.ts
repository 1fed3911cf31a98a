// Renderings of rich-text content: plain text, HTML (every character of text escaped) and Markdown
// (every character that would change the meaning escaped). Paragraphs are lines; blocks are separated
// by a blank line.
import escapeHtml from 'escape-html'
import type { Content, TextRun } from './schemas.js'

/** Plain text as rich text: one paragraph per line. */
export function contentOfText(text: string): Content {
  const lines = text.split(/\r?\n/)
  return { blocks: [{ type: 'rich_text', elements: lines.map((line) => ({ type: 'paragraph' as const, children: line === '' ? [] : [{ type: 'text' as const, text: line }] })) }] }
}

// A text without surrogates has as many code points as UTF-16 units: no need to walk it.
const SURROGATE = /[\uD800-\uDFFF]/

/** Characters of text in the whole content, counted in code points (as JSON Schema counts lengths). */
export function textLength(content: Content): number {
  let length = 0
  for (const block of content.blocks)
    for (const paragraph of block.elements)
      for (const run of paragraph.children) {
        if (!SURROGATE.test(run.text)) length += run.text.length
        else for (const _ of run.text) length++
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

// JavaScript's \s (the white space emphasis may not touch), tested one character at a time.
const WHITE_SPACE = /\s/

/** The run's text split into leading white space, the rest and trailing white space, in one linear scan. */
function splitWhiteSpace(text: string): [lead: string, core: string, trail: string] {
  let start = 0
  while (start < text.length && WHITE_SPACE.test(text.charAt(start))) start++
  let end = text.length
  while (end > start && WHITE_SPACE.test(text.charAt(end - 1))) end--
  return [text.slice(0, start), text.slice(start, end), text.slice(end)]
}

const hardBreaks = (markdown: string) => markdown.replaceAll('\n', '\\\n')

/** Code spans cannot hold a line break: each line is a span of its own, joined by hard breaks. */
function markdownCodeLines(text: string): string {
  return text
    .split('\n')
    .map((line) => (line === '' ? '' : markdownCode(line)))
    .join('\\\n')
}

function markdownRun(run: TextRun): string {
  const style = run.style ?? {}
  // Emphasis cannot open or close next to white space: keep it outside the markers.
  const [lead, core, trail] = splitWhiteSpace(run.text)
  if (core === '') return hardBreaks(escapeMarkdown(run.text))
  let md = style.code ? markdownCodeLines(core) : hardBreaks(escapeMarkdown(core))
  if (style.strikethrough) md = `~~${md}~~`
  if (style.italic) md = `*${md}*`
  if (style.bold) md = `**${md}**`
  return `${hardBreaks(escapeMarkdown(lead))}${md}${hardBreaks(escapeMarkdown(trail))}`
}

const styleKey = (run: TextRun) => ['bold', 'italic', 'strikethrough', 'code'].map((k) => (run.style?.[k as keyof typeof run.style] ? 1 : 0)).join('')

/**
 * Line ends become \n; empty runs go (an empty run between two code runs would let their fences touch:
 * `a``b` reads as one span whose text is no longer code); neighbouring runs of one style become one, since
 * adjacent markers (`a``b`, **a****b**) would fuse. After this no two code-only runs are neighbours.
 */
function coalesce(runs: TextRun[]): TextRun[] {
  const merged: TextRun[] = []
  for (const run of runs) {
    const text = run.text.replace(/\r\n?/g, '\n')
    if (text === '') continue
    const last = merged[merged.length - 1]
    if (last && styleKey(last) === styleKey(run)) merged[merged.length - 1] = { ...last, text: last.text + text }
    else merged.push({ ...run, text })
  }
  return merged
}

/** A hard break at the very end of a paragraph would show as a backslash: line ends there are dropped. */
function withoutTrailingBreaks(paragraph: string): string {
  let end = paragraph.length
  while (end >= 2 && paragraph.charAt(end - 1) === '\n' && paragraph.charAt(end - 2) === '\\') end -= 2
  return paragraph.slice(0, end)
}

/** Leading white space would start an indented code block or vanish: write it as character references. */
function keepLeadingSpace(paragraph: string): string {
  return paragraph.replace(/(^|\n)([ \t]+)/g, (_, start: string, space: string) => start + space.replace(/ /g, '&#32;').replace(/\t/g, '&#9;'))
}

export function renderMarkdown(content: Content): string {
  return content.blocks
    .map((block) => block.elements.map((p) => keepLeadingSpace(withoutTrailingBreaks(coalesce(p.children).map(markdownRun).join('')))).join('\n\n'))
    .join('\n\n')
}
