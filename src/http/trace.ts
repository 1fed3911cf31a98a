// W3C Trace Context (`traceparent`), so that a trace started by a client (or by us) follows the work a request
// causes into the calls we make: agent deliveries and webhook deliveries carry a child of the request's context.
// The header is four dash-separated hex fields; parsing it needs no library.
import { randomBytes } from 'node:crypto'
import type { FastifyRequest } from 'fastify'

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/
const ZERO_TRACE = '0'.repeat(32)
const ZERO_SPAN = '0'.repeat(16)

export interface TraceContext {
  traceId: string
  spanId: string
  flags: string
}

/** The incoming context, or null when absent or invalid (the spec says to start a new trace then). */
export function parseTraceparent(header: string | undefined): TraceContext | null {
  if (header === undefined) return null
  const match = TRACEPARENT.exec(header.trim().toLowerCase())
  if (!match) return null
  const [, version, traceId, spanId, flags, rest] = match as unknown as [string, string, string, string, string, string | undefined]
  // Version ff is invalid; version 00 has exactly four fields; a later version may append more.
  if (version === 'ff' || (version === '00' && rest !== undefined)) return null
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return null
  return { traceId, spanId, flags }
}

// Random ids come from a pool filled 4 KiB at a time, as Node's randomUUID() does: one system call per
// about 170 spans instead of two per span (it was 4 % of an edit's CPU time in a profile).
const POOL_BYTES = 4096
let pool = Buffer.alloc(0)
let used = 0

function randomHex(bytes: number): string {
  if (used + bytes > pool.length) {
    pool = randomBytes(POOL_BYTES)
    used = 0
  }
  used += bytes
  return pool.toString('hex', used - bytes, used)
}

/** A `traceparent` for a call made on behalf of `parent` (same trace, a new span), or of a new trace. */
export function childTraceparent(parent: TraceContext | null): string {
  const traceId = parent?.traceId ?? randomHex(16)
  const flags = parent?.flags ?? '01'
  return `00-${traceId}-${randomHex(8)}-${flags}`
}

const requestSpans = new WeakMap<FastifyRequest, string>()

/**
 * The request's own span, stored with the work it creates (a run, a webhook delivery): a child of a valid
 * incoming `traceparent`, else the root of a new trace — never the incoming header itself. One per request
 * (a trigger starting several runs puts them all in one trace), made on first use so that requests creating
 * nothing pay nothing.
 */
export function traceparentFor(request: FastifyRequest): string {
  let span = requestSpans.get(request)
  if (span === undefined) {
    const header = request.headers.traceparent
    span = childTraceparent(parseTraceparent(typeof header === 'string' ? header : undefined))
    requestSpans.set(request, span)
  }
  return span
}

/** A new span under a stored traceparent (for a task, a delivery, one outgoing call); null stays null. */
export function childOfStored(stored: string | null): string | null {
  if (stored === null) return null
  return childTraceparent(parseTraceparent(stored))
}
