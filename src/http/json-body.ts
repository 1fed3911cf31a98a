// JSON bodies: Fastify's own parser (secure-json-parse, __proto__ and constructor.prototype refused),
// behind a linear check of the nesting depth. A body nested deeper than MAX_DEPTH is a 400: deeper
// structures would only be walked by recursive code later (serialisers, stringify) that could overflow.
// Text may not contain U+0000: PostgreSQL cannot store it, and the answer must not depend on the database.
// Numbers that parsing would change (1e400, 12345678901234567890, -0) are refused: bodies are stored exactly.
// Bytes that are not UTF-8 are refused (never turned into U+FFFD); a bodiless method may send an empty body.
// A body refused before it was read to its end (413, 415) is drained, a bounded amount, so the client reads the answer.
import { isUtf8 } from 'node:buffer'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { serializerCompiler, validatorCompiler } from './validation.js'
import { inexactNumbers } from './json-numbers.js'
import { BACKSLASH, CLOSE_ARRAY, CLOSE_OBJECT, OPEN_ARRAY, OPEN_OBJECT, QUOTE, escapePointer } from './json-text.js'
import { AppError, type FieldError } from './problem.js'

export const MAX_DEPTH = 64

/** True when the text holds more than `limit` opening brackets, inside strings or not (found by indexOf, not a loop over every character). */
function opensMoreThan(text: string, limit: number): boolean {
  let count = 0
  for (const opener of ['{', '[']) {
    for (let at = text.indexOf(opener); at !== -1; at = text.indexOf(opener, at + 1)) if (++count > limit) return true
  }
  return false
}

/** True when the JSON text nests deeper than `limit` (brackets inside strings do not count). */
export function nestsDeeperThan(text: string, limit: number): boolean {
  // A text with no more opening brackets than the limit cannot nest deeper: nearly every body, spared the scan.
  if (!opensMoreThan(text, limit)) return false
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === BACKSLASH) i++
      else if (c === QUOTE) inString = false
    } else if (c === QUOTE) inString = true
    else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > limit) return true
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) depth--
  }
  return false
}

/** JSON Pointers of every string (or key) that holds U+0000. */
function nulPointers(value: unknown, at = '', found: FieldError[] = []): FieldError[] {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) found.push({ pointer: at, detail: 'may not contain the NUL character (U+0000)' })
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => nulPointers(item, `${at}/${i}`, found))
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key.includes('\u0000')) found.push({ pointer: `${at}/${escapePointer(key)}`, detail: 'may not contain the NUL character (U+0000)' })
      nulPointers(item, `${at}/${escapePointer(key)}`, found)
    }
  }
  return found
}

const BODILESS = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS'])

/**
 * The API's JSON rules on a body's text — at most MAX_DEPTH levels, no U+0000, no number that parsing would change —
 * parsed by Fastify's parser (which refuses `__proto__` and `constructor.prototype`). Every /api body goes through
 * it, and so do inbound hooks' bodies (their route keeps the text for the signature).
 */
export function jsonRulesParser(app: FastifyInstance): (request: FastifyRequest, text: string, done: (error: Error | null, value?: unknown) => void) => void {
  const parse = app.getDefaultJsonParser('error', 'error')
  return (request, text, done) => {
    if (nestsDeeperThan(text, MAX_DEPTH)) {
      done(new AppError('malformed-json', `The body nests deeper than ${MAX_DEPTH} levels.`), undefined)
      return
    }
    parse(request, text, (error, parsed) => {
      if (error) return done(error, undefined)
      // JSON can only carry U+0000 as the escape \u0000: a quick search spares the walk for every other body.
      const errors = [...(text.includes('u0000') ? nulPointers(parsed) : []), ...inexactNumbers(text)]
      if (errors.length > 0) return done(new AppError('validation-error', `The body has ${errors.length} problem${errors.length === 1 ? '' : 's'}; see errors.`, errors), undefined)
      done(null, parsed)
    })
  }
}

async function jsonBody(app: FastifyInstance): Promise<void> {
  app.setValidatorCompiler(validatorCompiler)
  app.setSerializerCompiler(serializerCompiler)
  app.addHook('onSend', (request, reply, payload, done) => {
    drainRefusedBody(request, reply)
    done(null, payload)
  })
  // Only JSON bodies: without the text/plain parser any other media type is a 415.
  app.removeContentTypeParser('text/plain')
  const parse = jsonRulesParser(app)
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request: FastifyRequest, body: string | Buffer, done) => {
    const bytes = body as Buffer
    if (bytes.length === 0 && BODILESS.has(request.method)) return done(null, undefined)
    if (!isUtf8(bytes)) return done(new AppError('malformed-json', 'The body is not valid UTF-8.'), undefined)
    parse(request, bytes.toString('utf8'), done)
  })
}

// Past this many bytes of a refused body (or a declared length past the limit by more), the connection is closed.
export const DRAIN_LIMIT_BYTES = 8 * 1024 * 1024

/**
 * A request refused before its body was read to the end (too large, wrong media type): Fastify asks Node to close
 * the connection, and Node destroys the socket once the answer is written — a client still sending then gets EPIPE,
 * or a reset that throws away the answer it had not read yet. Instead the connection stays open and the rest of the
 * body is read and dropped, at most DRAIN_LIMIT_BYTES; past that the socket is closed.
 */
function drainRefusedBody(request: FastifyRequest, reply: FastifyReply): void {
  const raw = request.raw
  if (raw.complete || (reply.statusCode !== 413 && reply.statusCode !== 415) || reply.getHeader('connection') !== 'close') return
  const declared = Number(request.headers['content-length'])
  if (declared > DRAIN_LIMIT_BYTES) return
  // A chunked body nobody began to read (a 415) would be drained by Node without our count: close as before.
  if (Number.isNaN(declared) && reply.statusCode !== 413) return
  reply.removeHeader('connection')
  let drained = 0
  raw.on('data', (chunk: Buffer) => {
    drained += chunk.length
    if (drained > DRAIN_LIMIT_BYTES) raw.socket.destroy()
  })
  raw.resume()
}

/** JSON bodies and their validation (Ajv, every error with a pointer). */
export const jsonBodies = fp(jsonBody, { name: 'tandem-json-body', dependencies: ['tandem-problems'] })
