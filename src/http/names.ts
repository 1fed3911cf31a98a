// Names people read and choose between (agents, streams): stored in Unicode NFC, so that "é" typed two
// ways is one name, and free of characters that make one name look like another — bidi controls, which
// reorder what is shown (U+202A–U+202E, U+2066–U+2069, and the marks U+061C, U+200E, U+200F), and
// zero-width characters (U+200B–U+200D, U+2060, U+FEFF).
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import Type from 'typebox'

export const MAX_NAME_LENGTH = 120

const INVISIBLE = '\\u061C\\u200B-\\u200F\\u202A-\\u202E\\u2060\\u2066-\\u2069\\uFEFF'

export const Name = Type.String({
  minLength: 1,
  maxLength: MAX_NAME_LENGTH,
  pattern: `^[^${INVISIBLE}]*$`,
  description: `a name of 1 to ${MAX_NAME_LENGTH} characters without bidi controls or zero-width characters`,
})

// Below U+0300 every character is NFC as it stands (the first combining marks start there): such a name needs no
// normalising.
const NEEDS_NFC = /[\u0300-\uFFFF]/

/** preValidation hook: the body's `name`, when a string, in NFC — before its length is checked. */
export function normaliseName(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  const body = request.body as { name?: unknown } | null | undefined
  if (body !== null && typeof body === 'object' && typeof body.name === 'string' && NEEDS_NFC.test(body.name)) body.name = body.name.normalize('NFC')
  done()
}
