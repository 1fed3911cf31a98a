// Random bytes for secrets (task tokens, the vault's IVs) are drawn from a pool the CSPRNG refills
// (secureRandomBytes, src/ids.ts): every byte is handed out once, to one caller, who owns the Buffer it got.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { secureRandomBytes } from '../src/ids.js'

describe('secureRandomBytes', () => {
  it('returns a new Buffer of the size asked for, up to 4096 bytes', () => {
    for (const size of [0, 1, 12, 32, 1000, 4095, 4096]) {
      const bytes = secureRandomBytes(size)
      assert.ok(Buffer.isBuffer(bytes))
      assert.equal(bytes.length, size)
    }
  })

  it('never hands out the same bytes twice, across many refills of the pool', () => {
    // 5,000 draws of 32 bytes are 160,000 bytes: the 4 KiB pool is refilled about 40 times.
    const seen = new Set<string>()
    for (let i = 0; i < 5000; i++) seen.add(secureRandomBytes(32).toString('hex'))
    assert.equal(seen.size, 5000)
    // Draws of sizes that do not divide the pool, so that refills happen part-way: no 8-byte piece comes back.
    const pieces = new Set<string>()
    let total = 0
    for (let i = 0; i < 2000; i++) {
      const bytes = secureRandomBytes(8 * (1 + (i % 7)))
      for (let at = 0; at < bytes.length; at += 8) pieces.add(bytes.subarray(at, at + 8).toString('hex'))
      total += bytes.length / 8
    }
    assert.equal(pieces.size, total)
  })

  it('a Buffer it returned is never changed by later calls', () => {
    const mine = secureRandomBytes(32)
    const copy = Buffer.from(mine)
    for (let i = 0; i < 10_000; i++) secureRandomBytes(32)
    assert.deepEqual(mine, copy)
  })

  it('refuses more than 4096 bytes with a RangeError', () => {
    assert.throws(() => secureRandomBytes(4097), RangeError)
    assert.throws(() => secureRandomBytes(65536), RangeError)
  })
})
