// The console's editor mapping (web/src/richtext): spec 2.4 content ⇄ ProseMirror documents, both ways.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { getSchema } from '@tiptap/core'
import { Node as PMNode } from '@tiptap/pm/model'
import { richTextExtensions } from '../../web/src/richtext/extensions.js'
import { contentToDoc, docToContent, normalizeContent, type Content } from '../../web/src/richtext/mapping.js'

const schema = getSchema(richTextExtensions)

const style = fc.record(
  { bold: fc.boolean(), italic: fc.boolean(), strikethrough: fc.boolean(), code: fc.boolean() },
  { requiredKeys: [] },
)
const text = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 12 }), fc.constantFrom('', '\n', 'a\nb', '\n\n', 'שלום', '😀'))
const run = fc.record({ type: fc.constant('text' as const), text, style }, { requiredKeys: ['type', 'text'] })
const paragraph = fc.record(
  { type: fc.constant('paragraph' as const), direction: fc.constantFrom('ltr' as const, 'rtl' as const), children: fc.array(run, { maxLength: 6 }) },
  { requiredKeys: ['type', 'children'] },
)
const content: fc.Arbitrary<Content> = fc.record({
  blocks: fc.array(fc.record({ type: fc.constant('rich_text' as const), elements: fc.array(paragraph, { maxLength: 4 }) }), { minLength: 1, maxLength: 4 }),
})

test('content → editor → content gives the canonical form of the content', () => {
  fc.assert(
    fc.property(content, (c) => {
      assert.deepEqual(docToContent(contentToDoc(c)), normalizeContent(c))
    }),
    { numRuns: 2000 },
  )
})

test('every mapped document is valid for the editor schema and already in ProseMirror form', () => {
  fc.assert(
    fc.property(content, (c) => {
      const doc = contentToDoc(c)
      const node = PMNode.fromJSON(schema, doc)
      node.check()
      assert.deepEqual(JSON.parse(JSON.stringify(node.toJSON())), doc)
    }),
    { numRuns: 2000 },
  )
})

test('editor → content → editor is the identity', () => {
  fc.assert(
    fc.property(content, (c) => {
      const doc = JSON.parse(JSON.stringify(PMNode.fromJSON(schema, contentToDoc(c)).toJSON()))
      assert.deepEqual(JSON.parse(JSON.stringify(PMNode.fromJSON(schema, contentToDoc(docToContent(doc))).toJSON())), doc)
    }),
    { numRuns: 2000 },
  )
})

test('canonical form keeps meaning: the same text, style and direction character by character', () => {
  fc.assert(
    fc.property(content, (c) => {
      const n = normalizeContent(c)
      assert.equal(n.blocks.length, c.blocks.length)
      c.blocks.forEach((block, b) => {
        assert.equal(n.blocks[b]!.elements.length, block.elements.length)
        block.elements.forEach((p, i) => {
          const q = n.blocks[b]!.elements[i]!
          assert.equal(q.direction, p.direction)
          const chars = (runs: typeof p.children) => runs.flatMap((r) => [...r.text].map((ch) => `${ch}|${['bold', 'italic', 'strikethrough', 'code'].filter((s) => r.style?.[s as 'bold']).join()}`))
          assert.deepEqual(chars(q.children), chars(p.children))
        })
      })
      assert.deepEqual(normalizeContent(n), n)
    }),
    { numRuns: 1000 },
  )
})

test('a known message maps to the expected document', () => {
  const c: Content = { blocks: [{ type: 'rich_text', elements: [{ type: 'paragraph', direction: 'rtl', children: [
    { type: 'text', text: 'Hello\n', style: { bold: true, code: true } },
    { type: 'text', text: 'world', style: { italic: false } },
  ] }] }] }
  assert.deepEqual(contentToDoc(c), { type: 'doc', content: [{ type: 'richTextBlock', content: [{ type: 'paragraph', attrs: { direction: 'rtl' }, content: [
    { type: 'text', text: 'Hello', marks: [{ type: 'bold' }, { type: 'code' }] },
    { type: 'hardBreak', marks: [{ type: 'bold' }, { type: 'code' }] },
    { type: 'text', text: 'world' },
  ] }] }] })
})
