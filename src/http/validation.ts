// Request validation: Ajv with every error collected, no coercion and no property removal for bodies;
// query strings and path parameters (always strings on the wire) are coerced to their declared types.
import { Ajv, type Options, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'
import type { FastifySchemaCompiler } from 'fastify'

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
