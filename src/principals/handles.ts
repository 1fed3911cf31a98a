// Handles: how people and agents are named in a workspace (`@maria` in an operatorPool).
export const HANDLE_PATTERN = '^[a-z0-9][a-z0-9._-]{0,63}$'
const HANDLE = new RegExp(HANDLE_PATTERN)
export const HANDLE_MAX = 64

export function isHandle(text: string): boolean {
  return HANDLE.test(text)
}

/** An operatorPool entry or a typed handle → the handle: one leading `@` dropped, lower case. */
export function normalizeHandle(entry: string): string {
  return (entry.startsWith('@') ? entry.slice(1) : entry).toLowerCase()
}

/**
 * The handle a name gets when none is given: lower case, every character outside `a-z 0-9 . _ -` turned into
 * `-` ("Maria López" → `maria-l-pez`). So that it is always a valid handle, leading `-`, `.` and `_` are
 * dropped, it is cut to 64 characters, and a name with nothing left becomes `key`.
 */
export function defaultHandle(name: string): string {
  const mapped = Array.from(name.toLowerCase(), (c) => (/[a-z0-9._-]/.test(c) ? c : '-')).join('')
  const handle = mapped.replace(/^[-._]+/, '').slice(0, HANDLE_MAX)
  return handle === '' ? 'key' : handle
}
