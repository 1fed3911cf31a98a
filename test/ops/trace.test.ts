// W3C traceparent: continue a valid incoming trace with a new span; start a new trace for anything invalid.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { childTraceparent, parseTraceparent } from '../../src/http/trace.js'

const FORM = /^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/

describe('traceparent', () => {
  it('continues a valid trace with a new span id and the same flags', () => {
    const incoming = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'
    const child = childTraceparent(parseTraceparent(incoming))
    assert.match(child, FORM)
    const [, traceId, spanId, flags] = child.split('-')
    assert.equal(traceId, '4bf92f3577b34da6a3ce929d0e0e4736')
    assert.notEqual(spanId, '00f067aa0ba902b7')
    assert.equal(flags, '01')
    assert.equal(childTraceparent(parseTraceparent('00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-00'))?.split('-')[3], '00')
  })

  it('new traces and spans stay well-formed and distinct across refills of the random pool', () => {
    const seen = new Set<string>()
    // 24 random bytes per new trace: 2,000 of them use the 4 KiB pool about twelve times over.
    for (let i = 0; i < 2000; i++) {
      const made = childTraceparent(null)
      assert.match(made, FORM)
      const [, traceId, spanId] = made.split('-') as [string, string, string]
      assert.ok(!seen.has(traceId) && !seen.has(spanId), `repeated id in ${made}`)
      seen.add(traceId).add(spanId)
    }
  })

  it('accepts a later version with extra fields, refuses version 00 with extra fields', () => {
    assert.ok(parseTraceparent('01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future'))
    assert.equal(parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra'), null)
  })

  it('starts a new trace for an absent or invalid header', () => {
    for (const bad of [
      undefined,
      '',
      'garbage',
      'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
      '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1',
    ]) {
      assert.equal(parseTraceparent(bad), null, String(bad))
    }
    const a = childTraceparent(null)
    const b = childTraceparent(null)
    assert.match(a, FORM)
    assert.notEqual(a.split('-')[1], b.split('-')[1], 'each new trace has its own id')
  })
})
