// Request validation: Ajv with every error collected, no coercion and no property removal for bodies;
// query strings and path parameters (always strings on the wire) are coerced to their declared types.
import { Ajv, type Options, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'
import type { FastifySchemaCompiler, FastifySerializerCompiler } from 'fastify'
import fastJsonStringify from 'fast-json-stringify'

// ajv-formats is CommonJS; under NodeNext its function is the `default` property of the module.
const addFormats = addFormatsModule.default

const common: Options = {
  allErrors: true,
  removeAdditional: false,
  useDefaults: false,
  strict: false,
  messages: true,
  verbose: true,
}

function makeAjv(options: Options): Ajv {
  const ajv = new Ajv({ ...common, ...options })
  addFormats(ajv, { mode: 'full' })
  // A size bound on free-form JSON (an agent's config): its UTF-8 bytes as JSON.stringify writes them.
  ajv.addKeyword({
    keyword: 'x-max-serialized-bytes',
    schemaType: 'number',
    validate: (limit: number, data: unknown) => Buffer.byteLength(JSON.stringify(data) ?? '') <= limit,
  })
  return ajv
}

const bodyAjv = makeAjv({ coerceTypes: false })
const parameterAjv = makeAjv({ coerceTypes: true, useDefaults: true })

/** A body validator for a schema checked outside a route (Tandem's own output, before it is answered). */
export function compileBodyValidator(schema: object): ValidateFunction {
  return bodyAjv.compile(schema)
}

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : parameterAjv
  return ajv.compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>
}

/**
 * Responses go through Fastify's own serializer (fast-json-stringify), each schema compiled once per process:
 * Fastify's default compiles every route's response schemas again for each app instance, which a process that
 * builds several apps (the tests build one per database) pays each time. The route schemas are module-level
 * values shared by every instance, and no schema is registered with addSchema, so a compiled serializer depends on
 * its schema alone.
 */
const serializers = new WeakMap<object, (data: unknown) => string>()

export const serializerCompiler: FastifySerializerCompiler<unknown> = ({ schema }) => {
  const key = schema as object
  let serialize = serializers.get(key)
  if (!serialize) {
    serialize = fastJsonStringify(key)
    serializers.set(key, serialize)
  }
  return serialize
}
