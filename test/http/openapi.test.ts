// /openapi.json is a valid OpenAPI 3.1 document generated from the route schemas; /docs serves the reference offline.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { Validator } from '@seriousme/openapi-schema-validator'
import { build, send } from '../helpers.js'

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

  it('holds the core operations with the schemas that validate them', async () => {
    const document = (await send(app, 'GET', '/openapi.json')).json()
    const create = document.paths['/api/agents'].post
    const body = create.requestBody.content['application/json'].schema
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
