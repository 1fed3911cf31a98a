// What the linear scans of JSON text (json-body.ts: nesting depth; json-numbers.ts: inexact numbers) share:
// the character codes they look for, and the escaping of a key into a JSON Pointer step (RFC 6901).
export const OPEN_OBJECT = 0x7b
export const OPEN_ARRAY = 0x5b
export const CLOSE_OBJECT = 0x7d
export const CLOSE_ARRAY = 0x5d
export const QUOTE = 0x22
export const BACKSLASH = 0x5c
export const COMMA = 0x2c
export const MINUS = 0x2d

/** A key as one step of a JSON Pointer: `~` becomes `~0` and `/` becomes `~1`. */
export const escapePointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1')
