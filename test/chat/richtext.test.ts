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

// Shapes that broke the Markdown before: empty styled runs between code runs, backticks and markup in code,
// line ends of every kind (\r\n, \r, \n) inside and around code.
const codeHostile = fc.oneof(
  fc.constant(''),
  fc.string({ unit: fc.constantFrom(...'`<>"= \r\n\tabix/'), maxLength: 12 }),
  fc.constantFrom('<img src=x onerror=alert(1)>', '[x](https://t.example/p.png)', '![t](https://t.example/t.gif)', '<https://a.example>', '`', '``', ' ` ', '\r\n', '\r'),
)
const codeRun = fc.record({ type: fc.constant('text' as const), text: codeHostile, style: fc.record({ code: fc.constant(true), bold: fc.boolean(), italic: fc.boolean() }, { requiredKeys: ['code'] }) })
const emptyRun = fc.record({ type: fc.constant('text' as const), text: fc.constant(''), style })
const codeContent: fc.Arbitrary<Content> = fc.record({
  blocks: fc.array(
    fc.record({
      type: fc.constant('rich_text' as const),
      elements: fc.array(fc.record({ type: fc.constant('paragraph' as const), children: fc.array(fc.oneof(codeRun, emptyRun, run), { maxLength: 8 }) }), { minLength: 1, maxLength: 3 }),
    }),
    { minLength: 1, maxLength: 2 },
  ),
})
const oneParagraph = (children: Content['blocks'][number]['elements'][number]['children']): Content => ({ blocks: [{ type: 'rich_text', elements: [{ type: 'paragraph', children }] }] })

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

  it('property: the length is the count of code points, lone surrogates counted one each', () => {
    const text = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 20 }), fc.string({ unit: 'binary', maxLength: 20 }), fc.string({ maxLength: 20 }))
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 5 }), (texts) => {
        const c: Content = { blocks: [{ type: 'rich_text', elements: [{ type: 'paragraph', children: texts.map((t) => ({ type: 'text' as const, text: t })) }] }] }
        assert.equal(textLength(c), texts.reduce((sum, t) => sum + [...t].length, 0))
        // A lone surrogate (half of a pair) is one code point as well.
        const withLone = `${texts[0]}\uD83Da`
        const lone: Content = { blocks: [{ type: 'rich_text', elements: [{ type: 'paragraph', children: [{ type: 'text', text: withLone }] }] }] }
        assert.equal(textLength(lone), [...withLone].length)
      }),
      { numRuns: 2000, seed: 20261128 },
    )
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

  it('Markdown: code runs separated by an empty run stay code (their fences never touch)', () => {
    const markdown = new MarkdownIt({ html: true })
    const rendered = markdown.render(
      renderMarkdown(oneParagraph([
        { type: 'text', text: 'a`', style: { code: true } },
        { type: 'text', text: '', style: { bold: true } },
        { type: 'text', text: '<img src=x onerror=alert(1)>', style: { code: true } },
        { type: 'text', text: '', style: { italic: true } },
        { type: 'text', text: 'b', style: { code: true } },
      ])),
    )
    assert.doesNotMatch(rendered, /<img/)
    assert.equal(rendered, '<p><code>a`&lt;img src=x onerror=alert(1)&gt;b</code></p>\n')
  })

  it('Markdown: a line end inside a code run is a hard break between code spans; \\r\\n and \\r are line ends', () => {
    const markdown = new MarkdownIt({ html: true })
    assert.equal(renderMarkdown(oneParagraph([{ type: 'text', text: 'let a\n\nlet b', style: { code: true } }])), '`let a`\\\n\\\n`let b`')
    assert.equal(markdown.render(renderMarkdown(oneParagraph([{ type: 'text', text: 'a\r\nb\rc', style: { code: true } }]))), '<p><code>a</code><br>\n<code>b</code><br>\n<code>c</code></p>\n')
    assert.equal(markdown.render(renderMarkdown(oneParagraph([{ type: 'text', text: 'x\r\ny\rz' }]))), '<p>x<br>\ny<br>\nz</p>\n')
    assert.equal(renderMarkdown(oneParagraph([{ type: 'text', text: 'end\n\n' }])), 'end', 'no stray backslash at the end of a paragraph')
  })

  it('Markdown: linear in the length of white space (40 000-character runs of every kind)', () => {
    // Every character JavaScript's \s matches, as long runs between letters, at the edges and alone, in
    // plain, styled and code runs. The backtracking regular expression this replaces took about 1 s for
    // ONE such run; a bounded wait for all of them together tells the two apart without measuring speed.
    const kinds = [...'\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff']
    const started = performance.now()
    for (const space of kinds) {
      const long = space.repeat(39998)
      for (const text of ['a' + long + 'b', long + 'ab', 'ab' + long]) {
        for (const s of [{}, { bold: true }, { code: true }]) {
          const markdown = renderMarkdown(oneParagraph([{ type: 'text', text, style: s }]))
          assert.ok(markdown.includes('a'))
        }
      }
    }
    const seconds = (performance.now() - started) / 1000
    assert.ok(seconds < 10, `${kinds.length * 9} renderings of 40 000-character runs took ${seconds.toFixed(1)} s`)
  })

  it('property: Markdown with code, empty and hostile runs parses (html on) to p, strong, em, s, code and br only', () => {
    const markdown = new MarkdownIt({ html: true })
    const allowed = new Set(['p', 'strong', 'em', 's', 'code', 'br'])
    fc.assert(
      fc.property(codeContent, (c) => {
        const source = renderMarkdown(c)
        const fragment = parseFragment(markdown.render(source))
        for (const element of elements(fragment.childNodes as Node[])) {
          assert.ok(allowed.has(element.tagName), `unexpected <${element.tagName}> from ${JSON.stringify(source)}`)
          assert.equal(element.attrs.length, 0)
        }
        // The text of every code run stays inside <code>: nothing of it escapes into the paragraph.
        const codeText = c.blocks.flatMap((b) => b.elements.flatMap((p) => p.children.filter((r) => r.style?.code).map((r) => r.text))).join('')
        const inCode = elements(fragment.childNodes as Node[]).filter((e) => e.tagName === 'code').map((e) => textOf(e.childNodes as Node[])).join('')
        assert.equal(inCode.replace(/\s/g, ''), codeText.replace(/\s/g, ''), source)
      }),
      { numRuns: 3000, seed: 20261122 },
    )
  })
})
