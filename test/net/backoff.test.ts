// The one back-off function, the three schedules the service uses, and the one reading of a Retry-After header.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { AGENT_DELIVERY_BACKOFF, JOB_RETRY_BACKOFF, backoffMs, retryAfterMs } from '../../src/net/backoff.js'

describe('backoffMs', () => {
  it('grows by its factor from its base, up to its cap, with bounded jitter and Retry-After as a floor', () => {
    for (let retry = 1; retry <= 12; retry++) {
      const delay = backoffMs(AGENT_DELIVERY_BACKOFF, retry)
      const base = Math.min(1000 * 2 ** (retry - 1), 600_000)
      assert.ok(delay >= base && delay <= base * 1.25 + 1, `retry ${retry}: ${delay}`)
    }
    assert.equal(backoffMs(AGENT_DELIVERY_BACKOFF, 1, 30_000), 30_000)
    assert.equal(backoffMs({ baseMs: 5000, factor: 4 }, 3), 80_000)
  })

  it("matches graphile-worker's e^attempt seconds for failed jobs, at most e^10", () => {
    for (let attempt = 1; attempt <= 12; attempt++) {
      assert.equal(backoffMs(JOB_RETRY_BACKOFF, attempt), Math.round(Math.exp(Math.min(attempt, 10)) * 1000))
    }
  })
})

describe('retryAfterMs', () => {
  it('reads seconds, whole or fractional, as milliseconds', () => {
    assert.equal(retryAfterMs('7'), 7000)
    assert.equal(retryAfterMs(' 120 '), 120_000)
    assert.equal(retryAfterMs('0'), 0)
    assert.equal(retryAfterMs('1.5'), 1500)
    assert.equal(retryAfterMs('0.25'), 250)
  })

  it('reads an HTTP date as the time from now, and a date already past as 0', () => {
    // An HTTP date has whole seconds: 30 s from now reads as a little less than 30 s.
    const soon = retryAfterMs(new Date(Date.now() + 30_000).toUTCString()) as number
    assert.ok(soon > 28_000 && soon <= 30_000, `30 s from now read as ${soon} ms`)
    assert.equal(retryAfterMs(new Date(Date.now() - 60_000).toUTCString()), 0)
    assert.equal(retryAfterMs('Wed, 21 Oct 2015 07:28:00 GMT'), 0)
    assert.equal(retryAfterMs('-5'), 0, 'negative seconds are no wait at all')
  })

  it('takes the first value of a repeated header', () => {
    assert.equal(retryAfterMs(['3', '60']), 3000)
    assert.equal(retryAfterMs(['2.5']), 2500)
    assert.equal(retryAfterMs([]), undefined)
  })

  it('is undefined when there is no header or it cannot be read', () => {
    for (const value of [undefined, null, '', '   ']) assert.equal(retryAfterMs(value), undefined, JSON.stringify(value))
    for (const value of ['soon', 'not-a-date', 'Infinity', 'NaN']) assert.equal(retryAfterMs(value), undefined, value)
  })

  it('caps a wait longer than an hour at an hour', () => {
    assert.equal(retryAfterMs('3600'), 3_600_000)
    assert.equal(retryAfterMs('3601'), 3_600_000)
    assert.equal(retryAfterMs('86400'), 3_600_000)
    assert.equal(retryAfterMs(new Date(Date.now() + 2 * 24 * 3600 * 1000).toUTCString()), 3_600_000)
  })
})
