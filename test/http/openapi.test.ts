// /openapi.json is a valid OpenAPI 3.1 document generated from the route schemas, ready for client
// generators: it lints clean under Redocly's recommended rules, and openapi-typescript's types for it
// type-check a few real calls. /docs serves the reference offline.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { Validator } from '@seriousme/openapi-schema-validator'
import { createConfig, lintFromString } from '@redocly/openapi-core'
import openapiTS, { astToString } from 'openapi-typescript'
import ts from 'typescript'
import { build, send } from '../helpers.js'

type Json = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

function operations(document: Json): Array<{ path: string; method: string; operation: Json }> {
  return Object.entries(document.paths as Json).flatMap(([path, methods]) =>
    Object.entries(methods as Json).map(([method, operation]) => ({ path, method, operation: operation as Json })),
  )
}

// Calls a client would make, against the generated types: a renamed component, a lost operationId, a
// required field turned optional or a missing header parameter makes this fail to compile.
const USAGE = `
import type { components, operations, paths } from './api.js'
type Schemas = components['schemas']
export const agent: Schemas['Agent'] = {
  id: '0192f0c1-0000-7000-8000-000000000000', providerType: 'claude', authMode: null, name: 'Researcher', avatarAssetId: null,
  credentialId: null, config: {}, instructions: null, templateId: null, capabilities: { streaming: false, tools: [] },
  endpointUrl: null, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z',
}
export const create: operations['createAgent']['requestBody']['content']['application/json'] = { name: 'Researcher', providerType: 'mistral' }
// @ts-expect-error name is required
export const nameless: Schemas['CreateAgent'] = { providerType: 'claude' }
// @ts-expect-error not a provider
export const unknownProvider: Schemas['CreateAgent'] = { name: 'x', providerType: 'skynet' }
export const created: operations['createAgent']['responses'][201]['content']['application/json'] = agent
export const idempotent: NonNullable<operations['createAgent']['parameters']['header']>['idempotency-key'] = 'retry-1'
export const ifMatch: NonNullable<operations['editMessage']['parameters']['header']>['if-match'] = '"2"'
export const page: operations['listAgents']['responses'][200]['content']['application/json'] = { data: [agent], nextCursor: null }
export const problem: operations['editMessage']['responses'][412]['content']['application/problem+json'] = {
  type: 'urn:tandem:problem:precondition-failed', title: 't', status: 412, detail: 'd',
}
export const limit: NonNullable<paths['/api/agents']['get']['parameters']['query']>['limit'] = 10
export const draft: Schemas['CycleDraft']['draft']['phasesTemplate'][number]['autoAdvance'] = true
export const revision: Schemas['MessageRevisionPage']['data'][number]['revision'] = 1
export const stream: Schemas['Stream']['description'] = null
`

describe('OpenAPI document and docs', () => {
  let app: FastifyInstance
  before(async () => {
    app = await build('sqlite')
  })
  after(() => app.close())

  it('is a valid OpenAPI 3.1 document', async () => {
    const document = (await send(app, 'GET', '/openapi.json')).json()
    assert.equal(document.openapi, '3.1.0')
    const result = await new Validator().validate(document)
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 1))
  })

  it('gives every operation a unique operationId, the ones clients are written against included', async () => {
    const document = (await send(app, 'GET', '/openapi.json')).json()
    const ids = operations(document).map(({ path, method, operation }) => {
      assert.match(operation.operationId ?? '', /^[a-z][A-Za-z]+$/, `${method} ${path} has an operationId`)
      return operation.operationId as string
    })
    assert.equal(new Set(ids).size, ids.length, 'unique')
    for (const id of ['createAgent', 'listAgents', 'getAgent', 'updateAgent', 'deleteAgent', 'createStream', 'listStreams', 'getStream',
      'postMessage', 'listMessages', 'getMessage', 'editMessage', 'listMessageRevisions', 'renderMessage', 'draftCycle', 'saveCycle', 'listCycles', 'getCycle']) {
      assert.ok(ids.includes(id), id)
    }
  })

  it('names every shape as a component and refers to it; documents the headers and the server', async () => {
    const document = (await send(app, 'GET', '/openapi.json')).json()
    const schemas = document.components.schemas as Json
    for (const name of ['Agent', 'AgentPage', 'CreateAgent', 'UpdateAgent', 'Stream', 'StreamPage', 'Message', 'MessagePage', 'MessageRevision',
      'MessageRevisionPage', 'RichText', 'Cycle', 'CyclePage', 'CycleDraft', 'CycleDefinition', 'Phase', 'Problem']) {
      assert.ok(schemas[name], name)
    }
    for (const { path, method, operation } of operations(document)) {
      if (!path.startsWith('/api')) continue
      const body = operation.requestBody?.content?.['application/json']?.schema
      if (body) assert.ok(body.$ref, `${method} ${path}: request body is a $ref`)
      for (const [status, response] of Object.entries(operation.responses as Json)) {
        const content = (response as Json).content ?? {}
        if (Number(status) >= 400) assert.equal(content['application/problem+json']?.schema.$ref, '#/components/schemas/Problem', `${method} ${path} ${status}`)
        else if (content['application/json']) assert.ok(content['application/json'].schema.$ref, `${method} ${path} ${status} is a $ref`)
      }
    }
    const header = (operationId: string, name: string) =>
      operations(document).find((o) => o.operation.operationId === operationId)?.operation.parameters?.find((p: Json) => p.in === 'header' && p.name === name)
    for (const id of ['createAgent', 'createStream', 'postMessage', 'saveCycle']) assert.ok(header(id, 'idempotency-key'), `${id}: Idempotency-Key`)
    assert.equal(header('draftCycle', 'idempotency-key'), undefined, 'drafting creates nothing')
    assert.ok(header('editMessage', 'if-match'), 'editMessage: If-Match')
    assert.deepEqual(document.servers.map((s: Json) => s.url), ['http://127.0.0.1:3000'])
  })

  it('names the URL the server listens on', async () => {
    const live = await build('sqlite')
    try {
      const url = await live.listen({ port: 0, host: '127.0.0.1' })
      const document = (await (await fetch(`${url}/openapi.json`)).json()) as Json
      assert.deepEqual(document.servers.map((s: Json) => s.url), [url])
    } finally {
      await live.close()
    }
  })

  it("lints with Redocly's recommended rules at zero errors", async () => {
    const document = (await send(app, 'GET', '/openapi.json')).body
    const config = await createConfig({ extends: ['recommended'] })
    const problems = await lintFromString({ source: document, absoluteRef: 'openapi.json', config })
    const errors = problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)
    assert.deepEqual(errors, [])
  })

  it('generates TypeScript types (openapi-typescript) that type-check real calls', async () => {
    const document = (await send(app, 'GET', '/openapi.json')).json()
    const dir = mkdtempSync(join(tmpdir(), 'tandem-openapi-'))
    try {
      writeFileSync(join(dir, 'api.ts'), astToString(await openapiTS(document)))
      writeFileSync(join(dir, 'usage.ts'), USAGE)
      const program = ts.createProgram([join(dir, 'usage.ts')], {
        strict: true, noEmit: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, types: [],
      })
      const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
      assert.deepEqual(diagnostics, [])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('holds the core operations with the schemas that validate them', async () => {
    const document = (await send(app, 'GET', '/openapi.json')).json()
    const create = document.paths['/api/agents'].post
    const body = document.components.schemas.CreateAgent
    assert.deepEqual(body.required, ['name'])
    assert.equal(body.additionalProperties, false)
    assert.equal(body.properties.name.maxLength, 120)
    assert.equal(body.properties.instructions.maxLength, 20000)
    assert.equal(body.properties.endpointUrl.maxLength, 2048)
    assert.equal(body.properties.capabilities.properties.tools.maxItems, 50)
    assert.ok(create.responses['201'] && create.responses['400'])
    for (const [path, method] of [['/api/agents/{id}', 'get'], ['/api/agents/{id}', 'patch'], ['/api/agents/{id}', 'delete'], ['/api/streams', 'post'], ['/api/streams/{id}', 'get']]) {
      assert.ok(document.paths[path as string]?.[method as string], `${method} ${path}`)
    }
  })

  it('serves the interactive reference and its assets locally', async () => {
    const page = await send(app, 'GET', '/docs/')
    assert.equal(page.statusCode, 200)
    assert.match(page.headers['content-type'] as string, /text\/html/)
    const script = await send(app, 'GET', '/docs/static/swagger-ui-bundle.js')
    assert.equal(script.statusCode, 200)
    assert.ok(!page.body.includes('cdn.'), 'no CDN')
  })
})
