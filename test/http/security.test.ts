// Hardening of the HTTP layer: local mode serves only direct requests addressed to loopback,
// peers are rate-limited before authentication, malformed URLs are problems, /docs has a CSP, and the
// server limits connections and slow headers.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { connect, type Socket } from 'node:net'
import { once } from 'node:events'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { waitFor } from '../wait.js'
import { createKey, injectWithKey } from '../auth.js'

const PROBLEM = 'application/problem+json; charset=utf-8'

describe('local mode: only direct requests addressed to loopback', () => {
  let app: FastifyInstance
  before(async () => {
    app = await build('sqlite', { TANDEM_AUTH: 'local' })
  })
  after(() => app.close())

  it('accepts a Host of localhost, 127.0.0.1 or [::1], with any port', async () => {
    for (const host of ['localhost', 'localhost:3000', 'LOCALHOST:80', '127.0.0.1', '127.0.0.1:65535', '[::1]', '[::1]:8080']) {
      const res = await app.inject({ method: 'GET', url: '/api/agents', headers: { host } })
      assert.equal(res.statusCode, 200, host)
    }
  })

  it('refuses any other Host everywhere (DNS rebinding), with a problem that says what to do', async () => {
    const hosts = ['evil.example', 'evil.example:3000', 'localhost.evil.example', '127.0.0.1.nip.io', 'localhost.', '127.0.0.2', '[::2]', '0.0.0.0:3000', 'localhost:3000:1', 'localhost:abc']
    for (const host of hosts) {
      for (const url of ['/api/agents', '/docs', '/healthz', '/openapi.json', '/', '/api/nowhere']) {
        const res = await app.inject({ method: 'GET', url, headers: { host } })
        assert.equal(res.statusCode, 421, `${host} ${url}`)
        assert.equal(res.headers['content-type'], PROBLEM)
        assert.equal(res.json().type, 'urn:tandem:problem:misdirected-request')
        assert.match(res.json().detail, /TANDEM_AUTH=required/)
        assert.equal(res.headers['x-content-type-options'], 'nosniff')
      }
    }
  })

  it('refuses requests through a proxy (Forwarded, X-Forwarded-*, X-Real-IP, Via) and changes nothing', async () => {
    const proxied: Array<Record<string, string>> = [{ forwarded: 'for=127.0.0.1' }, { 'x-forwarded-for': '127.0.0.1' }, { 'x-forwarded-host': 'localhost' }, { 'x-forwarded-proto': 'https' }, { 'x-real-ip': '127.0.0.1' }, { via: '1.1 caddy' }]
    for (const headers of proxied) {
      const res = await send(app, 'POST', '/api/agents', { name: 'through a proxy' }, headers)
      assert.equal(res.statusCode, 403, JSON.stringify(headers))
      assert.equal(res.json().type, 'urn:tandem:problem:proxied-request')
      assert.match(res.json().detail, /TANDEM_AUTH=required/)
      assert.equal((await app.inject({ method: 'GET', url: '/docs', headers })).statusCode, 403, 'the docs too')
    }
    assert.deepEqual((await send(app, 'GET', '/api/agents')).json().data, [])
  })
})

describe('required mode does not check Host or proxy headers (keys decide)', () => {
  let app: FastifyInstance
  let key: string
  before(async () => {
    app = await build('sqlite', { TANDEM_AUTH: 'required' })
    key = (await createKey(app, { name: 'k', role: 'admin' })).key
  })
  after(() => app.close())

  it('serves any Host and forwarded requests with a key', async () => {
    const res = await injectWithKey(app, key, { method: 'GET', url: '/api/agents', headers: { host: 'tandem.example', 'x-forwarded-for': '203.0.113.9', via: '1.1 nginx' } })
    assert.equal(res.statusCode, 200)
  })
})

for (const dialect of dialects()) {
  describe(`rate limit per peer before authentication (${dialect})`, () => {
    let app: FastifyInstance
    let key: string
    before(async () => {
      app = await build(dialect, { TANDEM_AUTH: 'required', TANDEM_RATE_LIMIT: '100/minute', TANDEM_PEER_RATE_LIMIT: '5/minute' })
      key = (await createKey(app, { name: 'k', role: 'admin' })).key
    })
    after(() => app.close())

    it('key guessing from one address meets a 429; other addresses are not affected', async () => {
      const statuses = []
      for (let i = 0; i < 8; i++) {
        const res = await app.inject({ method: 'GET', url: '/api/agents', remoteAddress: '198.51.100.7', headers: { authorization: `Bearer tdm_guess${i}` } })
        statuses.push(res.statusCode)
      }
      assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429, 429, 429])
      const limited = await injectWithKey(app, key, { method: 'GET', url: '/api/agents', remoteAddress: '198.51.100.7' })
      assert.equal(limited.statusCode, 429, 'even a right key waits: the address is out of budget')
      assert.equal(limited.json().type, 'urn:tandem:problem:rate-limited')
      assert.ok(Number(limited.headers['retry-after']) >= 1)
      const other = await injectWithKey(app, key, { method: 'GET', url: '/api/agents', remoteAddress: '198.51.100.8' })
      assert.equal(other.statusCode, 200)
      assert.equal((await app.inject({ method: 'GET', url: '/healthz', remoteAddress: '198.51.100.7' })).statusCode, 200, 'health is not limited')
    })
  })
}

describe('error hygiene', () => {
  let app: FastifyInstance
  before(async () => {
    app = await build('sqlite')
  })
  after(() => app.close())

  it('a URL that does not decode is a problem document with the request id and nosniff', async () => {
    for (const url of ['/api/agents/%E0%A4%A', '/api/agents/%', '/%C0%AF', '/docs/%FF']) {
      const res = await app.inject({ method: 'GET', url })
      assert.equal(res.statusCode, 400, url)
      assert.equal(res.headers['content-type'], PROBLEM)
      assert.deepEqual(res.json(), { type: 'urn:tandem:problem:malformed-url', title: 'The URL is not valid', status: 400, detail: 'The URL holds a percent-encoding that is not valid UTF-8.' })
      assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/)
      assert.equal(res.headers['x-content-type-options'], 'nosniff')
    }
  })

  it('/docs has a Content-Security-Policy that loads nothing from elsewhere', async () => {
    for (const url of ['/docs', '/docs/', '/docs/static/swagger-initializer.js']) {
      const res = await app.inject({ method: 'GET', url })
      const policy = String(res.headers['content-security-policy'])
      assert.match(policy, /default-src 'self'/, url)
      assert.match(policy, /object-src 'none'/)
      assert.match(policy, /frame-ancestors 'self'/)
      assert.doesNotMatch(policy, /https:|swagger\.io|\*/)
    }
    const initializer = await app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' })
    assert.match(initializer.body, /"validatorUrl":null/, 'no call to the online validator')
  })
})

describe('connection limits', () => {
  let app: FastifyInstance
  let port: number
  before(async () => {
    app = await build('sqlite', { TANDEM_MAX_CONNECTIONS: '3' })
    await app.listen({ port: 0, host: '127.0.0.1' })
    port = (app.server.address() as { port: number }).port
  })
  after(() => app.close())

  const open = async () => {
    const socket = connect(port, '127.0.0.1')
    await once(socket, 'connect')
    return socket
  }
  // How many connections the server holds, once it has seen them arrive or close.
  const serverConnections = () => new Promise<number>((resolve, reject) => app.server.getConnections((error, n) => (error ? reject(error) : resolve(n))))
  const connections = (count: number) => waitFor(async () => (await serverConnections()) === count, { what: `the server to hold ${count} connections` })
  const closed = (socket: Socket) => new Promise<string>((resolve) => {
    let data = ''
    socket.on('data', (chunk) => (data += chunk))
    socket.on('close', () => resolve(data))
    socket.on('error', () => undefined)
  })

  it('closes connections beyond TANDEM_MAX_CONNECTIONS at once, and serves again when one closes', async () => {
    const held = [await open(), await open(), await open()]
    // The server counts them before the next one arrives.
    await connections(3)
    const extra = await open()
    const answer = await Promise.race([closed(extra), new Promise<string>((resolve) => setTimeout(() => resolve('still open'), 5000))])
    assert.equal(answer, '', 'the fourth connection is closed without an answer')
    held[0]?.destroy()
    await connections(2)
    assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200)
    // Closed on the server's side too before the next test opens its own (fetch may keep its connection open).
    const counted = await serverConnections()
    for (const socket of held) socket.destroy()
    await connections(counted - 2)
  })

  it('cuts a slow-loris client with a 408 within the headers time-out, and closes an idle keep-alive connection', async () => {
    const slow = await open()
    const slowEnded = closed(slow)
    slow.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: ')
    const idle = await open()
    const idleEnded = closed(idle)
    idle.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n')
    const within = (ended: Promise<string>) => Promise.race([ended, new Promise<string>((resolve) => setTimeout(() => resolve('still open'), 15000))])
    const [slowAnswer, idleAnswer] = await Promise.all([within(slowEnded), within(idleEnded)])
    assert.match(slowAnswer, /^HTTP\/1\.1 408/)
    assert.match(idleAnswer, /^HTTP\/1\.1 200/, 'answered, then closed while idle')
    assert.match(idleAnswer, /keep-alive/i)
  })
})
