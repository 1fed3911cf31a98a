// Abuse limits: per-key rate limiting with 429 + Retry-After, security headers, CORS only when configured.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { ensureWorkspace } from '../../src/workspaces/store.js'
import { build, send } from '../helpers.js'
import { createKey } from '../auth.js'

describe('rate limiting (required mode, 5 requests per minute)', () => {
  let app: FastifyInstance
  let alice: Record<string, string>
  let bob: Record<string, string>
  before(async () => {
    app = await build('sqlite', { TANDEM_AUTH: 'required', TANDEM_RATE_LIMIT: '5/minute', TANDEM_PEER_RATE_LIMIT: '100/minute' })
    const workspaceId = await ensureWorkspace(app.database.db, 'default')
    alice = (await createKey(app, { workspaceId, name: 'a', role: 'member' })).headers
    bob = (await createKey(app, { workspaceId, name: 'b', role: 'member' })).headers
  })
  after(() => app.close())

  it('answers 429 problems with Retry-After once a key spends its budget, and counts each key apart', async () => {
    const statuses = []
    for (let i = 0; i < 7; i++) statuses.push((await send(app, 'GET', '/api/agents', undefined, alice)).statusCode)
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429, 429])
    const limited = await send(app, 'GET', '/api/agents', undefined, alice)
    assert.equal(limited.json().type, 'urn:tandem:problem:rate-limited')
    assert.equal(limited.headers['content-type'], 'application/problem+json; charset=utf-8')
    const retryAfter = Number(limited.headers['retry-after'])
    assert.ok(retryAfter >= 1 && retryAfter <= 60, String(retryAfter))
    assert.equal((await send(app, 'GET', '/api/agents', undefined, bob)).statusCode, 200, 'another key has its own budget')
    assert.equal((await send(app, 'GET', '/healthz')).statusCode, 200, 'health is never limited')
  })
})

describe('local mode defaults', () => {
  let app: FastifyInstance
  before(async () => {
    app = await build('sqlite', { TANDEM_AUTH: 'local' })
  })
  after(() => app.close())

  it('does not limit the rate', async () => {
    for (let i = 0; i < 30; i++) assert.equal((await send(app, 'GET', '/api/agents')).statusCode, 200)
  })

  it('sends security headers on every response, errors included', async () => {
    for (const res of [await send(app, 'GET', '/api/agents'), await send(app, 'GET', '/api/nowhere'), await send(app, 'POST', '/api/agents', { name: '' })]) {
      assert.equal(res.headers['x-content-type-options'], 'nosniff')
      assert.equal(res.headers['x-frame-options'], 'SAMEORIGIN')
      assert.equal(res.headers['referrer-policy'], 'no-referrer')
      assert.equal(res.headers['cross-origin-resource-policy'], 'same-origin')
    }
  })

  it('has CORS off unless configured', async () => {
    const res = await app.inject({ method: 'OPTIONS', url: '/api/agents', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } })
    assert.equal(res.headers['access-control-allow-origin'], undefined)
    assert.equal((await app.inject({ method: 'GET', url: '/api/agents', headers: { origin: 'https://evil.example' } })).headers['access-control-allow-origin'], undefined)
  })
})

describe('CORS when configured', () => {
  let app: FastifyInstance
  before(async () => {
    app = await build('sqlite', { TANDEM_AUTH: 'required', TANDEM_CORS_ORIGINS: 'https://app.example' })
  })
  after(() => app.close())

  it('allows the listed origins only', async () => {
    const allowed = await app.inject({ method: 'OPTIONS', url: '/api/agents', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } })
    assert.equal(allowed.statusCode, 204)
    assert.equal(allowed.headers['access-control-allow-origin'], 'https://app.example')
    const other = await app.inject({ method: 'GET', url: '/api/agents', headers: { origin: 'https://evil.example' } })
    assert.equal(other.headers['access-control-allow-origin'], undefined)
  })
})

describe('header size limit', () => {
  let app: FastifyInstance
  let port: number
  before(async () => {
    app = await build('sqlite')
    await app.listen({ port: 0, host: '127.0.0.1' })
    port = (app.server.address() as { port: number }).port
  })
  after(() => app.close())

  it('refuses headers over 16 KiB with 431 before any handler runs', async () => {
    const { request } = await import('node:http')
    const { status, type, body } = await new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/api/agents', headers: { 'x-padding': 'x'.repeat(20 * 1024) } }, (res) => {
        let body = ''
        res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body }))
      })
      req.on('error', reject)
      req.end()
    })
    assert.equal(status, 431)
    assert.equal(type, 'application/problem+json; charset=utf-8')
    assert.deepEqual(JSON.parse(body), {
      type: 'urn:tandem:problem:headers-too-large',
      title: 'The request headers are too large',
      status: 431,
      detail: 'The request headers must be at most 16 KiB together.',
    })
    assert.equal((await fetch(`http://127.0.0.1:${port}/api/agents`)).status, 200, 'normal headers still pass')
  })
})
