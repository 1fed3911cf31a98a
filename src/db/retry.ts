// Transactions PostgreSQL asks to run again. A deadlock (40P01) or a serialization failure (40001) aborts one of
// the transactions in the way; nothing it did is kept, and the same work run again from the start usually goes
// through. runTransaction does that, a bounded number of times with a short jittered pause between attempts, and
// then gives up with TransactionContended (a 503 with Retry-After at the HTTP edge, src/http/idempotency.ts).
//
// Only work whose every effect is in the transaction may be run again. An effect that leaves the database (a
// metric, a span) is handed to afterCommit: it runs once, after the attempt that committed, and never for an
// attempt that rolled back. Outside runTransaction, afterCommit runs it at once (the caller's transaction is not
// run again, so there is nothing to wait for).
import { AsyncLocalStorage } from 'node:async_hooks'
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

type Attempt = { hooks: Array<() => void>; open: boolean }
const attempts = new AsyncLocalStorage<Attempt>()

/** Runs `effect` once the transaction it is called in has committed (see the file's comment); at once outside runTransaction. */
export function afterCommit(effect: () => void): void {
  const attempt = attempts.getStore()
  if (attempt?.open) attempt.hooks.push(effect)
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
    const attempt: Attempt = { hooks: [], open: true }
    try {
      const result = await attempts.run(attempt, () => db.transaction().execute(work))
      attempt.open = false
      for (const hook of attempt.hooks) runCommitted(hook)
      return result
    } catch (error) {
      attempt.open = false
      const code = retryableCode(error)
      if (code === null) throw error
      if (n >= limit) throw new TransactionContended(code, n)
      await (options.pause ?? jitteredPause)(n)
    }
  }
}
