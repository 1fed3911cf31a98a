// post_message's text → rich text: paragraphs, inline emphasis by CommonMark's rules and nothing else, plain
// text read as is, right-to-left paragraphs, and past 50 paragraphs the rest joining the 50th block.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { messageContent } from '../../src/mcp-server/message-text.js'
import { MAX_BLOCKS } from '../../src/chat/schemas.js'

const runs = (text: string, format: 'markdown' | 'plain' = 'markdown') => messageContent(text, format).blocks[0]!.elements[0]!.children

describe('post_message text', () => {
  it('reads inline emphasis only', () => {
    assert.deepEqual(runs('a *b* __c__ ~~d~~ `e`'), [
      { type: 'text', text: 'a ' }, { type: 'text', text: 'b', style: { italic: true } }, { type: 'text', text: ' ' }, { type: 'text', text: 'c', style: { bold: true } },
      { type: 'text', text: ' ' }, { type: 'text', text: 'd', style: { strikethrough: true } }, { type: 'text', text: ' ' }, { type: 'text', text: 'e', style: { code: true } },
    ])
    assert.deepEqual(runs('snake_case_name'), [{ type: 'text', text: 'snake_case_name' }], 'intraword underscores are not emphasis (CommonMark)')
    assert.deepEqual(runs('- [link](http://x) <b>html</b> \\*'), [{ type: 'text', text: '- [link](http://x) <b>html</b> \\*' }], 'everything else stays as written')
    assert.deepEqual(runs('**bold**', 'plain'), [{ type: 'text', text: '**bold**' }])
  })

  it('paragraphs become blocks; line breaks stay; RTL; past 50 paragraphs the rest join the 50th block', () => {
    assert.deepEqual(messageContent('one\ntwo\n\n  \nthree', 'plain').blocks.map((b) => b.elements[0]!.children[0]!.text), ['one\ntwo', 'three'])
    assert.equal(messageContent('مرحبا world', 'plain').blocks[0]!.elements[0]!.direction, 'rtl')
    assert.equal(messageContent('hello مرحبا', 'plain').blocks[0]!.elements[0]!.direction, undefined)
    const many = messageContent(Array.from({ length: 60 }, (_, i) => `p${i}`).join('\n\n'), 'plain')
    assert.equal(many.blocks.length, MAX_BLOCKS)
    assert.deepEqual(many.blocks[MAX_BLOCKS - 1]!.elements.map((e) => e.children[0]!.text), Array.from({ length: 11 }, (_, i) => `p${i + 49}`))
  })
})
