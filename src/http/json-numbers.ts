// Numbers that JSON.parse would change: 1e400 becomes Infinity (stored as null), 12345678901234567890
// becomes 12345678901234567000, -0 becomes 0, 1e-400 becomes 0. The service stores what it was sent
// exactly or refuses it, so each such number is found in the text — in one linear scan — with its pointer.
import { BACKSLASH, CLOSE_ARRAY, CLOSE_OBJECT, COMMA, MINUS, OPEN_ARRAY, OPEN_OBJECT, QUOTE, escapePointer } from './json-text.js'
import type { FieldError } from './problem.js'

// A number can only be changed by parsing if it has an exponent, 16 or more digits in a row, or a minus
// zero: texts without any of these (nearly every body) skip the scan. Strings may match too; that only
// costs the scan.
const MAY_HOLD_INEXACT_NUMBER = /\d{16}|[eE][+-]?\d|-0/

const isNumberChar = (c: number) => (c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x65 || c === 0x45 || c === 0x2b || c === MINUS

/** Why a JSON number token would not be stored as written, or null. */
export function numberProblem(token: string): string | null {
  const value = Number(token)
  if (!Number.isFinite(value)) return 'is too large to be stored (numbers must be finite)'
  if (Math.abs(value) > Number.MAX_SAFE_INTEGER) return `must be between -${Number.MAX_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER} (±(2^53 − 1)) to be stored exactly`
  if (Object.is(value, -0)) return 'must not be -0 (it would be stored as 0)'
  if (value === 0 && /[1-9]/.test(token.split(/[eE]/)[0] as string)) return 'is too small to be stored (it would become 0)'
  return null
}

/** Every number of a valid JSON text that parsing would change, with its JSON Pointer. */
export function inexactNumbers(text: string): FieldError[] {
  if (!MAY_HOLD_INEXACT_NUMBER.test(text)) return []
  const found: FieldError[] = []
  // For each open container: its kind, and the key or index of the member being read.
  const containers: number[] = []
  const path: Array<string | number> = []
  let expectKey = false
  let i = 0
  while (i < text.length) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      const start = i++
      while (i < text.length && text.charCodeAt(i) !== QUOTE) i += text.charCodeAt(i) === BACKSLASH ? 2 : 1
      i++
      if (expectKey) {
        path[path.length - 1] = JSON.parse(text.slice(start, i)) as string
        expectKey = false
      }
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      containers.push(c)
      path.push(c === OPEN_OBJECT ? '' : 0)
      expectKey = c === OPEN_OBJECT
      i++
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      containers.pop()
      path.pop()
      i++
    } else if (c === COMMA) {
      if (containers[containers.length - 1] === OPEN_OBJECT) expectKey = true
      else path[path.length - 1] = (path[path.length - 1] as number) + 1
      i++
    } else if (c === MINUS || (c >= 0x30 && c <= 0x39)) {
      const start = i
      while (i < text.length && isNumberChar(text.charCodeAt(i))) i++
      const problem = numberProblem(text.slice(start, i))
      if (problem) found.push({ pointer: path.map((step) => `/${escapePointer(String(step))}`).join(''), detail: problem })
    } else i++
  }
  return found
}
