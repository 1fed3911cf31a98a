// Renderings of rich text. Property tests: no text, however hostile, can inject markup into the HTML
// or the Markdown, and every rendering keeps the text.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import MarkdownIt from 'markdown-it'
import { parseFragment, type DefaultTreeAdapterMap } from 'parse5'
import { renderHtml, renderMarkdown, renderText, textLength } from '../../src/chat/richtext.js'
import type { Content } from '../../src/chat/schemas.js'

type Node = DefaultTreeAdapterMap['childNode']
type Element = DefaultTreeAdapterMap['element']

const hostile = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 30 }),
  fc.string({ unit: fc.constantFrom(...'<>&"\'`*_~[]()#!\\|-+.=:/ \n\tabc1'), maxLength: 30 }),
  fc.constantFrom('<script>alert(1)</script>', '"><img src=x onerror=alert(1)>', '&amp;&lt;', '[x](javascript:alert(1))', '<!-- c -->', '```', '1. item', '# h', '    code'),
)
const style = fc.record({ bold: fc.boolean(), italic: fc.boolean(), strikethrough: fc.boolean(), code: fc.boolean() }, { requiredKeys: [] })
const run = fc.record({ type: fc.constant('text' as const), text: hostile, style }, { requiredKeys: ['type', 'text'] })
const paragraph = fc.record(
  { type: fc.constant('paragraph' as const), direction: fc.constantFrom('ltr' as const, 'rtl' as const), children: fc.array(run, { maxLength: 4 }) },
  { requiredKeys: ['type', 'children'] },
)
const content: fc.Arbitrary<Content> = fc.record({
  blocks: fc.array(fc.record({ type: fc.constant('rich_text' as const), elements: fc.array(paragraph, { minLength: 1, maxLength: 3 }) }), { minLength: 1, maxLength: 3 }),
})

function elements(nodes: Node[], found: Element[] = []): Element[] {
  for (const node of nodes) {
    if ('tagName' in node) {
      found.push(node)
      elements(node.childNodes as Node[], found)
    }
  }
  return found
}

function textOf(nodes: Node[]): string {
  return nodes.map((node) => (node.nodeName === '#text' ? (node as DefaultTreeAdapterMap['textNode']).value : node.nodeName === 'br' ? '\n' : 'childNodes' in node ? textOf(node.childNodes as Node[]) : '')).join('')
}

const squash = (text: string) => text.replace(/\s+/g, ' ').trim()
const paragraphTexts = (c: Content) => c.blocks.flatMap((b) => b.elements.map((p) => p.children.map((r) => r.text).join('')))

describe('rich-text renderings', () => {
  const sample: Content = {
    blocks: [
      {
        type: 'rich_text',
        elements: [
          { type: 'paragraph', direction: 'rtl', children: [{ type: 'text', text: 'שלום ' }, { type: 'text', text: 'bold', style: { bold: true } }] },
          { type: 'paragraph', children: [{ type: 'text', text: 'a<b>&"\'', style: { italic: true, strikethrough: true, code: true } }] },
        ],
      },
      { type: 'rich_text', elements: [{ type: 'paragraph', children: [{ type: 'text', text: 'two\nlines' }] }] },
    ],
  }

  it('plain text: paragraphs are lines, blocks are separated by a blank line', () => {
    assert.equal(renderText(sample), 'שלום bold\na<b>&"\'\n\ntwo\nlines')
  })

  it('HTML: escapes text, maps direction to dir and styles to strong/em/s/code', () => {
    assert.equal(
      renderHtml(sample),
      '<div class="rich-text"><p dir="rtl">שלום <strong>bold</strong></p><p><em><s><code>a&lt;b&gt;&amp;&quot;&#39;</code></s></em></p></div>\n' +
        '<div class="rich-text"><p>two<br>lines</p></div>',
    )
  })

  it('Markdown: styles as **, *, ~~ and backticks; special characters escaped', () => {
    assert.equal(renderMarkdown(sample), 'שלום **bold**\n\n*~~`a<b>&"\'`~~*\n\ntwo\\\nlines')
    const md = (text: string, s = {}) => renderMarkdown({ blocks: [{ type: 'rich_text', elements: [{ type: 'paragraph', children: [{ type: 'text', text, style: s }] }] }] })
    assert.equal(md('1. *not* a list # or [link](x)'), '1\\. \\*not\\* a list \\# or \\[link\\]\\(x\\)')
    assert.equal(md(' spaced ', { bold: true }), '&#32;**spaced** ', 'leading space kept as a character reference, outside the markers')
    assert.equal(md('a `tick`', { code: true }), '`` a `tick` ``', 'a code span that ends in a backtick is padded on both sides')
  })

  it('counts text in code points', () => {
    assert.equal(textLength({ blocks: [{ type: 'rich_text', elements: [{ type: 'paragraph', children: [{ type: 'text', text: '😀é' }, { type: 'text', text: 'ab' }] }] }] }), 4)
  })

  it('property: no text can inject markup into the HTML, and the text survives', () => {
    const allowed: Record<string, string[]> = { div: ['class'], p: ['dir'], strong: [], em: [], s: [], code: [], br: [] }
    fc.assert(
      fc.property(content, (c) => {
        const fragment = parseFragment(renderHtml(c))
        const found = elements(fragment.childNodes as Node[])
        for (const element of found) {
          assert.ok(element.tagName in allowed, `unexpected <${element.tagName}>`)
          for (const attribute of element.attrs) {
            assert.ok(allowed[element.tagName]?.includes(attribute.name), `unexpected ${attribute.name} on <${element.tagName}>`)
            if (attribute.name === 'dir') assert.ok(['ltr', 'rtl'].includes(attribute.value))
            if (attribute.name === 'class') assert.equal(attribute.value, 'rich-text')
          }
        }
        const paragraphs = found.filter((e) => e.tagName === 'p').map((p) => textOf(p.childNodes as Node[]))
        assert.deepEqual(paragraphs, paragraphTexts(c).map((t) => t.replace(/\r\n|\r/g, '\n')))
      }),
      { numRuns: 500, seed: 20261121 },
    )
  })

  it('property: no text can inject markup into the Markdown (rendered with raw HTML on), and the text survives', () => {
    const markdown = new MarkdownIt({ html: true, linkify: true })
    const allowed = new Set(['p', 'strong', 'em', 's', 'code', 'br'])
    fc.assert(
      fc.property(content, (c) => {
        const fragment = parseFragment(markdown.render(renderMarkdown(c)))
        for (const element of elements(fragment.childNodes as Node[])) {
          assert.ok(allowed.has(element.tagName), `unexpected <${element.tagName}> from ${JSON.stringify(renderMarkdown(c))}`)
          assert.equal(element.attrs.length, 0)
        }
        // CommonMark cannot open emphasis between a letter and punctuation ("a**<**"): there the markers
        // stay visible as literal * or ~. Every character of the text itself must survive.
        const withoutMarkers = (text: string) => squash(text.replace(/[*~]/g, ''))
        assert.equal(withoutMarkers(textOf(fragment.childNodes as Node[])), withoutMarkers(paragraphTexts(c).join(' ')))
      }),
      { numRuns: 500, seed: 20261121 },
    )
  })
})
