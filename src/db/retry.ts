// Transactions PostgreSQL asks to run again. A deadlock (40P01) or a serialization failure (40001) aborts one of
// the transactions in the way; nothing it did is kept, and the same work run again from the start usually goes
// through. runTransaction does that, a bounded number of times with a short jittered pause between attempts, and
// then gives up with TransactionContended (a 503 with Retry-After at the HTTP edge, src/http/idempotency.ts).
//
// Only work whose every effect is in the transaction may be run again. An effect that leaves the database (a
// metric, a span) is handed to afterCommit with the transaction it belongs to: it runs once, after the attempt
// that committed, and never for an attempt that rolled back. For a transaction not run by runTransaction,
// afterCommit runs it at once (that transaction is not run again, so there is nothing to wait for). The effects
// are kept by the transaction's handle, not in an async context: no AsyncLocalStorage on every request's path.
import type { Kysely, Transaction } from 'kysely'

/** Attempts of one transaction (its first and every retry) before a deadlock or serialization failure is given up on. */
export const TRANSACTION_ATTEMPTS = 3
/** The pause before retry n (1, 2, …) is up to n × this, at random (full jitter), so the two sides of a deadlock part. */
export const RETRY_PAUSE_MS = 25

/** SQLSTATEs after which the whole transaction is run again. */
const RETRYABLE = new Set(['40P01', '40001'])

/** The transaction still failed with a deadlock or a serialization failure after TRANSACTION_ATTEMPTS attempts. */
export class TransactionContended extends Error {
  readonly code: string
  constructor(code: string, attempts: number) {
    super(`the transaction failed ${attempts} times with SQLSTATE ${code} (${code === '40P01' ? 'deadlock detected' : 'serialization failure'})`)
    this.name = 'TransactionContended'
    this.code = code
  }
}

/** The SQLSTATE that asks for the transaction to run again, if `error` (or what it wraps) has one. */
export function retryableCode(error: unknown): string | null {
  for (let cause = error, depth = 0; cause !== null && typeof cause === 'object' && depth < 5; cause = (cause as { cause?: unknown }).cause, depth++) {
    const code = (cause as { code?: unknown }).code
    if (typeof code === 'string' && RETRYABLE.has(code)) return code
  }
  return null
}

/** The effects waiting for the commit of each attempt runTransaction runs, by the attempt's transaction handle. */
const waiting = new WeakMap<object, Array<() => void>>()

/** Runs `effect` once `trx` has committed (see the file's comment); at once when runTransaction does not run `trx`. */
export function afterCommit(trx: object, effect: () => void): void {
  const effects = waiting.get(trx)
  if (effects) effects.push(effect)
  else effect()
}

export interface RetryOptions {
  attempts?: number
  /** The pause before retry `n`; a test hands in its own. */
  pause?: (retry: number) => Promise<void>
}

// The work is committed: an effect after it never turns its success into a failure.
function runCommitted(effect: () => void): void {
  try {
    effect()
  } catch {
    // a metric or a span that fails is lost, not the committed change
  }
}

const jitteredPause = (retry: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.random() * retry * RETRY_PAUSE_MS))

/** Runs `work` in a transaction of `db`, again from the start after a deadlock or a serialization failure (see the file's comment). */
export async function runTransaction<DB, T>(db: Kysely<DB>, work: (trx: Transaction<DB>) => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const limit = options.attempts ?? TRANSACTION_ATTEMPTS
  for (let n = 1; ; n++) {
    const effects: Array<() => void> = []
    try {
      const result = await db.transaction().execute((trx) => {
        waiting.set(trx, effects)
        return work(trx)
      })
      for (const effect of effects) runCommitted(effect)
      return result
    } catch (error) {
      const code = retryableCode(error)
      if (code === null) throw error
      if (n >= limit) throw new TransactionContended(code, n)
      await (options.pause ?? jitteredPause)(n)
    }
  }
}
