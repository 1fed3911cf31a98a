// Server-made identifiers (UUIDv7: time-ordered, so they also order lists) and timestamps.
import { randomFillSync } from 'node:crypto'
import { v7 } from 'uuid'

export const newId = (): string => v7()

// The ISO text of the current millisecond, made once per millisecond (a run asks for it a dozen times).
let lastMs = Number.NaN
let lastIso = ''
export const now = (): string => {
  const ms = Date.now()
  if (ms !== lastMs) {
    lastIso = new Date(ms).toISOString()
    lastMs = ms
  }
  return lastIso
}

// Random bytes for secrets (task tokens, the vault's IVs) from node:crypto's CSPRNG, drawn a pool at a time: each
// call into OpenSSL costs 10–20 µs here whatever its size, as much as the rest of making a token. Node's
// randomUUID and the uuid package pool the same way. Every byte is handed out once and the pool is refilled when
// spent, so no two callers ever share bytes.
const POOL_BYTES = 4096
const pool = Buffer.alloc(POOL_BYTES)
let poolOffset = POOL_BYTES

/** `size` cryptographically random bytes (a new Buffer the caller owns); size ≤ 4096. */
export function secureRandomBytes(size: number): Buffer {
  if (size > POOL_BYTES) throw new RangeError(`secureRandomBytes takes at most ${POOL_BYTES} bytes`)
  if (poolOffset + size > POOL_BYTES) {
    randomFillSync(pool)
    poolOffset = 0
  }
  const bytes = Buffer.from(pool.subarray(poolOffset, poolOffset + size))
  poolOffset += size
  return bytes
}
