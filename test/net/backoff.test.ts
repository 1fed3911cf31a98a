// The one back-off function and the three schedules the service uses.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { AGENT_DELIVERY_BACKOFF, JOB_RETRY_BACKOFF, backoffMs } from '../../src/net/backoff.js'

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
