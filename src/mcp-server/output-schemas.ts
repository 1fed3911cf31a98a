// Each tool's outputSchema: its twin's success body's schema in /openapi.json, with every `$ref` resolved (an MCP
// client validates structuredContent against it on its own, without the document). release_item's twin answers
// 204; read_messages answers `{ data }` of the messages' page.
import type { FastifyInstance } from 'fastify'
import type { ToolSpec } from './tools.js'

type Json = Record<string, unknown>
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)

function resolve(node: unknown, components: Json, seen: string[] = []): unknown {
  if (Array.isArray(node)) return node.map((n) => resolve(n, components, seen))
  if (!isObject(node)) return node
  const ref = node.$ref
  if (typeof ref === 'string' && ref.startsWith('#/components/schemas/')) {
    const name = decodeURIComponent(ref.slice('#/components/schemas/'.length))
    // A schema that contains itself would not end: none of the bodies do; cut it to "any" if one ever does.
    if (seen.includes(name)) return {}
    return resolve(components[name], components, [...seen, name])
  }
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, resolve(v, components, seen)]))
}

const RELEASED = {
  type: 'object',
  properties: { runId: { type: 'string', format: 'uuid' }, phaseRunId: { type: 'string', format: 'uuid' }, claimedBy: { type: 'null' } },
  required: ['runId', 'phaseRunId', 'claimedBy'],
}

/** The output schema of each tool, by name. Throws at start-up when a twin's operationId is not in the document. */
export function outputSchemas(app: FastifyInstance, tools: ToolSpec[]): Map<string, Json> {
  const document = app.swagger() as unknown as { paths: Record<string, Record<string, Json>>; components: { schemas: Json } }
  const bodies = new Map<string, unknown>()
  for (const operations of Object.values(document.paths)) {
    for (const operation of Object.values(operations)) {
      const responses = (operation.responses ?? {}) as Record<string, Json>
      const success = responses['200'] ?? responses['201'] ?? responses['202']
      const schema = (success?.content as Record<string, Json> | undefined)?.['application/json']?.schema
      if (typeof operation.operationId === 'string') bodies.set(operation.operationId, schema)
    }
  }
  const schemas = new Map<string, Json>()
  for (const tool of tools) {
    if (tool.name === 'release_item') {
      schemas.set(tool.name, RELEASED)
      continue
    }
    const body = bodies.get(tool.operationId)
    if (!isObject(body)) throw new Error(`the MCP tool ${tool.name}: no JSON body of operation ${tool.operationId} in the OpenAPI document`)
    let schema = resolve(body, document.components.schemas) as Json
    if (tool.name === 'read_messages') {
      const properties = schema.properties as Json
      schema = { type: 'object', properties: { data: properties.data }, required: ['data'] }
    }
    schemas.set(tool.name, schema)
  }
  return schemas
}
