// Schema pieces shared by every feature: identifiers, timestamps, pages and problem details.
import type { FastifyReply } from 'fastify'
import Type, { type TSchema, type Static } from 'typebox'

// Spec 2.1: versions 1–8 with variant 8/9/a/b, the nil UUID or the max UUID, any case.
export const UUID_PATTERN =
  '^(?:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}' +
  '|00000000-0000-0000-0000-000000000000|[fF]{8}-[fF]{4}-[fF]{4}-[fF]{4}-[fF]{12})$'

export const Uuid = Type.String({ pattern: UUID_PATTERN, description: 'a UUID (versions 1 to 8 with variant 8, 9, a or b, the nil UUID or the max UUID; any case)' })

export const NIL_UUID = '00000000-0000-0000-0000-000000000000'

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds' })

/**
 * A value that is always present in responses, `null` when unset. Written as `type: [T, "null"]` rather
 * than `anyOf`, which fast-json-stringify can only resolve by validating every value.
 */
export function Nullable<T extends TSchema>(schema: T) {
  const { type, enum: values, ...rest } = schema as unknown as { type?: string; enum?: unknown[] }
  if (typeof type !== 'string') return Type.Union([schema, Type.Null()])
  return Type.Unsafe<Static<T> | null>({ ...rest, type: [type, 'null'], ...(values ? { enum: [...values, null] } : {}) })
}

export const IdParams = Type.Object({ id: Uuid }, { additionalProperties: false })

export const PageQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false },
)
export type PageQuery = Static<typeof PageQuery>

/** A page of items; named `<Item>Page` in the OpenAPI document when the item has a title. */
export function Page<T extends TSchema>(item: T) {
  const title = (item as { title?: string }).title
  return Type.Object(
    { data: Type.Array(item), nextCursor: Nullable(Type.String({ description: 'pass as ?cursor= for the next page; null on the last page' })) },
    title ? { title: `${title}Page` } : {},
  )
}

export const Problem = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    errors: Type.Optional(Type.Array(Type.Object({ pointer: Type.String(), detail: Type.String() }))),
    retriedBy: Type.Optional(Type.String({ description: 'already-retried: the run that retried this one' })),
  },
  { description: 'RFC 9457 problem details', title: 'Problem' },
)
export type Problem = Static<typeof Problem>

/** Problem responses that every `/api` route can send. */
export const ProblemResponses = {
  400: Problem,
  401: Problem,
  403: Problem,
  404: Problem,
  409: Problem,
  413: Problem,
  415: Problem,
  421: Problem,
  422: Problem,
  429: Problem,
  500: Problem,
  503: Problem,
}

/** A string limited to a fixed list of values. */
export function StringEnum<const T extends readonly string[]>(values: T, options: { description?: string } = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options })
}

/**
 * Answers with JSON text the handler already holds (an agent kept as text, a page assembled from such texts):
 * sent as it is, without the response serialiser. The response schema still documents the shape, and the
 * route's test checks answers against it.
 */
export function sendJsonText(reply: FastifyReply, json: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(json)
}
