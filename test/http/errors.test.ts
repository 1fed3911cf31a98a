// The HTTP layer: spec 2.1 identifiers in paths, unknown routes and methods, problem details shape.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, pointers, send } from '../helpers.js'

describe('HTTP layer', () => {
  let app: FastifyInstance
  before(async () => {
    app = await build('sqlite')
  })
  after(() => app.close())

  it('accepts every UUID form of spec 2.1 in a path (404 = valid but unknown)', async () => {
    const valid = [
      ...[1, 2, 3, 4, 5, 6, 7, 8].map((v) => `01890a5d-ac96-${v}74b-bcce-b302099a8057`),
      ...['8', '9', 'a', 'b', 'A', 'B'].map((variant) => `01890a5d-ac96-474b-${variant}cce-b302099a8057`),
      '00000000-0000-0000-0000-000000000000',
      'ffffffff-ffff-ffff-ffff-ffffffffffff',
      'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF',
      '01890A5D-AC96-774B-BCCE-B302099A8057',
    ]
    for (const id of valid) assert.equal((await send(app, 'GET', `/api/agents/${id}`)).statusCode, 404, id)
  })

  it('rejects every other form with a pointer at the parameter', async () => {
    const invalid = [
      '01890a5d-ac96-074b-bcce-b302099a8057', // version 0
      '01890a5d-ac96-974b-bcce-b302099a8057', // version 9
      '01890a5d-ac96-f74b-bcce-b302099a8057', // version f
      '01890a5d-ac96-774b-7cce-b302099a8057', // variant 7
      '01890a5d-ac96-774b-ccce-b302099a8057', // variant c
      '00000000-0000-0000-0000-000000000001', // almost nil
      'ffffffff-ffff-ffff-ffff-fffffffffffe', // almost max
      '01890a5dac96774bbcceb302099a8057', // no hyphens
      '{01890a5d-ac96-774b-bcce-b302099a8057}',
      '01890a5d-ac96-774b-bcce-b302099a8057a',
      'g1890a5d-ac96-774b-bcce-b302099a8057',
      'agent',
    ]
    for (const id of invalid) {
      const res = await send(app, 'GET', `/api/agents/${encodeURIComponent(id)}`)
      assert.equal(res.statusCode, 400, id)
      assert.deepEqual(pointers(res), ['/path/id'])
      assert.match(res.json().errors[0].detail, /UUID/)
    }
  })

  it('unknown routes are 404 problems; known paths with another method are 405 with Allow', async () => {
    const unknown = await send(app, 'GET', '/api/nothing-here')
    assert.equal(unknown.statusCode, 404)
    assert.equal(unknown.headers['content-type'], 'application/problem+json; charset=utf-8')
    assert.deepEqual(Object.keys(unknown.json()).sort(), ['detail', 'status', 'title', 'type'])
    const put = await send(app, 'PUT', '/api/agents/01890a5d-ac96-774b-bcce-b302099a8057', { name: 'x' })
    assert.equal(put.statusCode, 405)
    assert.equal(put.headers.allow, 'GET, PATCH, DELETE')
    assert.equal(put.json().type, 'urn:tandem:problem:method-not-allowed')
    assert.equal((await send(app, 'DELETE', '/api/agents')).headers.allow, 'GET, POST')
  })

  it('every response carries a request id', async () => {
    const res = await send(app, 'GET', '/healthz')
    assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/)
  })
})
