// Server-made identifiers (UUIDv7: time-ordered, so they also order lists) and timestamps.
import { randomFillSync } from 'node:crypto'
import { v7 } from 'uuid'

export const newId = (): string => v7()

export const now = (): string => new Date().toISOString()

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
