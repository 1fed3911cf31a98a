// CORS, over a real socket: a browser preflight for PATCH and DELETE (with the headers the API reads) is allowed.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { ensureWorkspace } from '../../src/workspaces/store.js'
import { build } from '../helpers.js'
import { createKey } from '../auth.js'

describe('CORS preflight', () => {
  let app: FastifyInstance
  let base: string
  let auth: Record<string, string>
  before(async () => {
    // CORS needs keys (local mode refuses it: a browser origin is not the local user).
    app = await build('sqlite', { TANDEM_AUTH: 'required', TANDEM_CORS_ORIGINS: 'http://localhost:5173' })
    base = await app.listen({ port: 0, host: '127.0.0.1' })
    const workspaceId = await ensureWorkspace(app.database.db, 'default')
    auth = (await createKey(app, { workspaceId, name: 'browser', role: 'member' })).headers
  })
  after(() => app.close())

  for (const method of ['PATCH', 'DELETE', 'POST']) {
    it(`allows ${method} from an allowed origin, with If-Match and Idempotency-Key`, async () => {
      const res = await fetch(`${base}/api/chat/messages/01890a5d-ac96-774b-bcce-b302099a8057`, {
        method: 'OPTIONS',
        headers: { origin: 'http://localhost:5173', 'access-control-request-method': method, 'access-control-request-headers': 'content-type, if-match, idempotency-key' },
      })
      assert.equal(res.status, 204)
      assert.equal(res.headers.get('access-control-allow-origin'), 'http://localhost:5173')
      const methods = (res.headers.get('access-control-allow-methods') ?? '').split(',').map((m) => m.trim())
      assert.ok(methods.includes(method), `${method} in ${methods}`)
      const headers = (res.headers.get('access-control-allow-headers') ?? '').toLowerCase()
      for (const header of ['content-type', 'if-match', 'idempotency-key', 'authorization']) assert.ok(headers.includes(header), header)
    })
  }

  it('a real request from the browser origin is allowed and exposes the ETag', async () => {
    const stream = await (await fetch(`${base}/api/streams`, { method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body: '{"name":"c"}' })).json() as { id: string }
    const res = await fetch(`${base}/api/streams/${stream.id}`, { headers: { origin: 'http://localhost:5173', ...auth } })
    assert.equal(res.headers.get('access-control-allow-origin'), 'http://localhost:5173')
    assert.match(res.headers.get('access-control-expose-headers') ?? '', /etag/)
  })
})
