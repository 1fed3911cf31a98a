// The body's nesting bound (src/http/json-body.ts): at most 64 levels. A text with few brackets skips the scan; one
// with many is scanned, and only nesting counts, not brackets side by side or inside strings.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { MAX_DEPTH, nestsDeeperThan } from '../../src/http/json-body.js'

const nested = (levels: number) => `${'['.repeat(levels)}1${']'.repeat(levels)}`

describe('the nesting bound of a JSON body', () => {
  it('64 levels pass and 65 do not, in arrays and in objects', () => {
    assert.equal(nestsDeeperThan(nested(MAX_DEPTH), MAX_DEPTH), false)
    assert.equal(nestsDeeperThan(nested(MAX_DEPTH + 1), MAX_DEPTH), true)
    const objects = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`
    assert.equal(nestsDeeperThan(objects(MAX_DEPTH), MAX_DEPTH), false)
    assert.equal(nestsDeeperThan(objects(MAX_DEPTH + 1), MAX_DEPTH), true)
  })

  it('many brackets side by side, or inside strings, are not depth', () => {
    const siblings = JSON.stringify({ items: Array.from({ length: 500 }, (_, i) => ({ i, tags: [i] })) })
    assert.equal(nestsDeeperThan(siblings, MAX_DEPTH), false)
    const inStrings = JSON.stringify({ text: '['.repeat(1000) + '{'.repeat(1000), quoted: '\\"[[[' })
    assert.equal(nestsDeeperThan(inStrings, MAX_DEPTH), false)
    // 65 levels of which one is written after 200 brackets in a string: still found.
    assert.equal(nestsDeeperThan(`{"s":"${'['.repeat(200)}","d":${nested(MAX_DEPTH)}}`, MAX_DEPTH), true)
  })
})
