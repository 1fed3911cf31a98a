// Token counts as vendors report them, checked before they are recorded, counted or priced: each must be a whole
// number from 0 to Number.MAX_SAFE_INTEGER. A report that is not (a negative count made a negative cost, 1e308 an
// infinite one, stored as null) is dropped whole: the attempt records no usage, as when none was reported.
import type { Usage } from '../schemas.js'
import { MAX_TOKEN_COUNT } from '../limits.js'

const validCount = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value <= MAX_TOKEN_COUNT

/** The usage when both counts are valid; null otherwise (`onInvalid` is told why). */
export function checkedUsage(usage: Usage | null | undefined, onInvalid?: (usage: unknown) => void): Usage | null {
  if (!usage) return null
  if (validCount(usage.inputTokens) && validCount(usage.outputTokens)) return usage
  onInvalid?.({ inputTokens: String(usage.inputTokens), outputTokens: String(usage.outputTokens) })
  return null
}
