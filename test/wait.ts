// Waiting in tests for something to happen, instead of sleeping a fixed time and hoping it did.
import { setTimeout as sleep } from 'node:timers/promises'

export interface WaitOptions {
  /** How long to wait at most before failing (default 10 s). */
  timeoutMs?: number
  /** What is waited for, in words: the failure names it. */
  what: string
  /** How often to look again (default 20 ms). */
  everyMs?: number
}

/**
 * Resolves with the condition's first truthy value, looking again every `everyMs`; fails after `timeoutMs`
 * with a message naming what it waited for.
 */
export async function waitFor<T>(condition: () => T | Promise<T>, { timeoutMs = 10_000, what, everyMs = 20 }: WaitOptions): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await condition()
    if (value) return value as NonNullable<T>
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(everyMs)
  }
}
