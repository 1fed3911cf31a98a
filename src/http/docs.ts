// The OpenAPI 3.1 document (generated from the route schemas) and the interactive reference at /docs.
// swagger-ui's assets are served from the npm package: the reference works offline.
//
// For client generators: every operation has a unique `operationId` (a route's `schema.operationId`),
// every named shape — a TypeBox schema given a `title` (`Agent`, `AgentPage`, `Problem`, …) — is hoisted to
// `components.schemas` and referred to with `$ref`, and `servers` names the URL the server listens on.
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import { problemKinds } from './problem.js'
import { applyContract } from './openapi-contract.js'

type Json = { [key: string]: unknown }
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)
const SCHEMA_KEYS = ['type', 'properties', 'items', 'anyOf', 'oneOf', 'allOf', 'enum', 'const']

/** JSON with every object's keys sorted: two schemas that differ only in key order are one shape. */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) => (isObject(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v))

/**
 * Replaces every schema that has a `title` by a `$ref` to `components.schemas[title]`, innermost first.
 * Two different shapes under one title are a programming error: it throws, and the OpenAPI test fails.
 */
export function hoistNamedSchemas(document: Json): Json {
  const named: Record<string, Json> = {}
  const serialized: Record<string, string> = {}
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit)
    if (!isObject(node)) return node
    const copy: Json = {}
    for (const [key, value] of Object.entries(node)) copy[key] = visit(value)
    const title = copy.title
    if (typeof title !== 'string' || !SCHEMA_KEYS.some((key) => key in copy)) return copy
    const text = canonical(copy)
    if (serialized[title] !== undefined && serialized[title] !== text) {
      throw new Error(`OpenAPI: two different schemas are titled "${title}"; give each shape its own title`)
    }
    serialized[title] = text
    named[title] = copy
    return { $ref: `#/components/schemas/${encodeURIComponent(title)}` }
  }
  const paths = visit(document.paths) as Json
  const webhooks = isObject(document.webhooks) ? (visit(document.webhooks) as Json) : undefined
  // Problems are sent as application/problem+json (swagger names every response application/json).
  for (const operations of Object.values(paths)) {
    for (const operation of Object.values(operations as Json)) {
      for (const [status, response] of Object.entries(((operation as Json).responses ?? {}) as Record<string, Json>)) {
        const content = response.content as Record<string, unknown> | undefined
        if (Number(status) >= 400 && content?.['application/json']) {
          response.content = { 'application/problem+json': content['application/json'] }
        }
      }
    }
  }
  const components = isObject(document.components) ? document.components : {}
  const schemas = { ...(isObject(components.schemas) ? components.schemas : {}), ...named }
  const sorted = Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b)))
  return { ...document, paths, ...(webhooks ? { webhooks } : {}), components: { ...components, schemas: sorted } }
}

/**
 * The route schemas reach the document through @fastify/swagger, which writes `const: x` as `enum: [x]` (its
 * `convertConstToEnum`, for swagger-ui); the events' schemas are added beside them and get the same rewrite, so
 * a shape named in both places (Message, RichText, …) is one shape.
 */
function constAsEnum(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(constAsEnum)
  if (!isObject(node)) return node
  const copy: Json = {}
  for (const [key, value] of Object.entries(node)) {
    if (key === 'const') copy.enum = [value]
    else copy[key] = constAsEnum(value)
  }
  return copy
}

/** The URL the server listens on (a wildcard bind is named relative to the document: `/`). */
function listeningUrl(app: FastifyInstance): string {
  const address = app.server.address() as AddressInfo | null
  const host = address?.address ?? app.config.host
  const port = address?.port ?? app.config.port
  if (host === '0.0.0.0' || host === '::') return '/'
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`
}

export async function registerDocs(app: FastifyInstance, options: { webhooks: () => Record<string, unknown> }): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Tandem API',
        version: '0.1.0',
        description:
          'AI agents and human operators working together on streams. Errors are RFC 9457 problem details; their `type` is one of: ' +
          problemKinds().map((k) => `\`${k.type}\` (${k.status})`).join(', ') + '. ' +
          'Creating POSTs honour an `Idempotency-Key` header: a retry with the same key and body gets the first response again ' +
          '(`Idempotent-Replayed: true`); the same key with another body is a 422; while the first request still runs, a 409 with ' +
          '`Retry-After`. Keys are scoped to the API key that sent them and expire after 24 hours.',
      },
      tags: [
        { name: 'agents', description: 'AI agents of the workspace' },
        { name: 'agent-templates', description: 'Built-in and workspace templates to create agents from' },
        { name: 'assets', description: 'Images (agent avatars), kept in the database' },
        { name: 'mcp-servers', description: 'MCP servers whose tools agents call, and their live tool lists' },
        { name: 'streams', description: 'Where agents and operators work together' },
        { name: 'chat', description: 'Rich-text messages of a stream, with edits and revisions' },
        { name: 'cycles', description: 'Drafting and saving cycle definitions' },
        { name: 'health', description: 'Liveness and readiness' },
      ],
      components: {
        securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'An API key from `npm run cli -- keys create`' } },
      },
      security: [{ apiKey: [] }],
    },
    // Events are described as OpenAPI 3.1 `webhooks`, one per type, with their `data` named (RunSummary, Message, …).
    transformObject: (documents) => applyContract(hoistNamedSchemas({ ...(('openapiObject' in documents ? documents.openapiObject : documents.swaggerObject) as Json), webhooks: constAsEnum(JSON.parse(JSON.stringify(options.webhooks()))) })),
  })
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    // No call to swagger.io's validator: the reference loads nothing from beyond this server.
    uiConfig: { validatorUrl: null },
    // The plugin's policy with its inline script and style hashes, minus what reaches beyond this server
    // (validator.swagger.io, any https: font or style) and upgrade-insecure-requests (breaks http://localhost).
    staticCSP: true,
    transformStaticCSP: (policy) =>
      policy
        .replace(' validator.swagger.io', '')
        .replaceAll(' https:', '')
        .replace(' upgrade-insecure-requests;', '')
        .replaceAll(' ;', ';')
        .concat(" connect-src 'self'; form-action 'self';"),
  })
  app.get('/openapi.json', { schema: { hide: true } }, async () => ({ ...app.swagger(), servers: [{ url: listeningUrl(app), description: 'this server' }] }))
}
