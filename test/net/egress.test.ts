// The egress guard: refusals are checked on the address (or at connect time on loopback servers of our own),
// never by connecting to a non-loopback range, so no test packet leaves this machine.
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, get, type Agent, type RequestListener, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { EgressDeniedError, createEgressGuard } from '../../src/net/egress.js'
import { ConfigError, loadConfig } from '../../src/config.js'

const REFUSED = [
  '127.0.0.1', '127.255.255.254', '::1', '0.0.0.0', '0.1.2.3', '::',
  '169.254.169.254', '169.254.0.1', 'fe80::1', 'febf:ffff::1',
  '10.0.0.1', '10.255.255.255', '172.16.0.1', '172.31.255.255', '192.168.0.1', '192.168.255.255',
  '100.64.0.1', '100.127.255.255', '224.0.0.1', '239.255.255.255', 'ff02::1', '255.255.255.255', '240.0.0.1',
  '192.0.2.1', '198.18.0.1', 'fc00::1', 'fd12:3456::1', '2001:db8::1', '2001::1',
  '::ffff:127.0.0.1', '::ffff:a9fe:a9fe', '::ffff:10.0.0.1', '::ffff:0:7f00:1', '::127.0.0.1', '::a9fe:a9fe',
  '64:ff9b::7f00:1', '64:ff9b::a9fe:a9fe', '64:ff9b:1::808:808', '2002:7f00:1::1', '2002:a9fe:a9fe::1', '2002:c0a8:101::1',
  'not an address', '', '0177.0.0.1', '2130706433',
]
const ALLOWED = [
  '8.8.8.8', '1.1.1.1', '93.184.215.14', '172.15.255.255', '172.32.0.0', '100.63.255.255', '100.128.0.0', '169.253.255.255',
  '2606:4700:4700::1111', '2a00:1450:4001::200e', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1',
]

/** A loopback server that counts the connections it accepts. */
async function countingServer(handler: RequestListener): Promise<{ server: Server; port: number; connections: () => number }> {
  let count = 0
  const server = createServer(handler)
  server.on('connection', () => {
    count += 1
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, port: (server.address() as AddressInfo).port, connections: () => count }
}

describe('egress guard: the address check', () => {
  const guard = createEgressGuard([])
  for (const address of REFUSED) {
    it(`refuses ${JSON.stringify(address)}`, () => assert.equal(guard.allows(address), false))
  }
  for (const address of ALLOWED) {
    it(`allows ${address}`, () => assert.equal(guard.allows(address), true))
  }

  it('opens exactly the ranges TANDEM_EGRESS_ALLOW names', () => {
    const open = createEgressGuard(['127.0.0.0/8', 'fd00::/8'])
    assert.equal(open.allows('127.0.0.1'), true)
    assert.equal(open.allows('::ffff:127.0.0.1'), true)
    assert.equal(open.allows('fd12::1'), true)
    assert.equal(open.allows('fc00::1'), false)
    assert.equal(open.allows('::1'), false)
    assert.equal(open.allows('169.254.169.254'), false)
    assert.equal(open.allows('10.0.0.1'), false)
  })
})

describe('egress guard: connections', () => {
  let target: Awaited<ReturnType<typeof countingServer>>
  before(async () => {
    target = await countingServer((request, response) => {
      if (request.url === '/redirect') {
        response.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end()
      } else {
        response.writeHead(200, { 'content-type': 'text/plain' }).end(`hello ${request.method} ${request.url}`)
      }
    })
  })
  after(() => new Promise<void>((resolve) => target.server.close(() => resolve())))

  const guard = createEgressGuard([])

  for (const host of ['127.0.0.1', '[::1]', '0.0.0.0', '[::ffff:127.0.0.1]', 'localhost', '2130706433']) {
    it(`refuses http://${host}:<port>/ without connecting`, async () => {
      const before = target.connections()
      await assert.rejects(guard.fetch(`http://${host}:${target.port}/`), (error: unknown) => {
        assert.ok(error instanceof EgressDeniedError, String(error))
        assert.match(error.message, /not a public address/)
        return true
      })
      assert.equal(target.connections(), before)
    })
  }

  for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://[::ffff:a9fe:a9fe]/', 'https://10.0.0.1/', 'http://[fd00::1]:8080/']) {
    it(`refuses ${url} before any socket exists`, async () => {
      await assert.rejects(guard.fetch(url), EgressDeniedError)
    })
  }

  it('names the address in the error, never the path or query of the URL', async () => {
    const error = await guard.fetch(`http://127.0.0.1:${target.port}/hooks/s3cr3t-path?key=s3cr3t-query`).catch((e: unknown) => e)
    assert.ok(error instanceof EgressDeniedError)
    assert.match(error.message, /127\.0\.0\.1/)
    assert.doesNotMatch(error.message, /s3cr3t/)
  })

  it('refuses a host name that resolves to loopback in its lookup', async () => {
    const error = await new Promise<Error | null>((resolve) => guard.lookup('localhost', { all: true }, (e) => resolve(e)))
    assert.ok(error instanceof EgressDeniedError)
    assert.match(error.message, /localhost/)
    const single = await new Promise<Error | null>((resolve) => guard.lookup('localhost', {}, (e) => resolve(e)))
    assert.ok(single instanceof EgressDeniedError)
  })

  it('connects to a loopback server when TANDEM_EGRESS_ALLOW opens 127.0.0.0/8', async () => {
    const open = createEgressGuard(loadConfig({ TANDEM_EGRESS_ALLOW: '127.0.0.0/8' }).egressAllow)
    const response = await open.fetch(`http://127.0.0.1:${target.port}/ping`, { method: 'POST', body: 'x' })
    assert.equal(response.status, 200)
    assert.equal(await response.text(), 'hello POST /ping')
    // A host name resolving to an allowed address works too (only its allowed addresses are used).
    const byName = await open.fetch(`http://localhost:${target.port}/named`)
    assert.equal(await byName.text(), 'hello GET /named')
    // A Request object is accepted as fetch accepts it.
    const viaRequest = await open.fetch(new Request(`http://127.0.0.1:${target.port}/req`, { method: 'PUT', body: 'y' }))
    assert.equal(await viaRequest.text(), 'hello PUT /req')
    const address = await new Promise<string>((resolve, reject) => open.lookup('localhost', {}, (e, a) => (e ? reject(e) : resolve(a as string))))
    assert.equal(address, '127.0.0.1')
  })

  it('returns a redirect to the metadata address as it is, never following it', async () => {
    const open = createEgressGuard(['127.0.0.0/8'])
    for (const redirect of [undefined, 'follow', 'error'] as const) {
      const response = await open.fetch(`http://127.0.0.1:${target.port}/redirect`, redirect ? { redirect } : {})
      assert.equal(response.status, 302)
      assert.equal(response.headers.get('location'), 'http://169.254.169.254/latest/meta-data/')
    }
    // Had it been followed, the guard would have refused it: an EgressDeniedError, not a 302.
    await assert.rejects(open.fetch('http://169.254.169.254/latest/meta-data/'), EgressDeniedError)
  })
})

/** GET through a node:http agent: the status, or the error the request failed with. */
function httpGet(url: string, agent: Agent): Promise<number | Error> {
  return new Promise((resolve) => {
    get(url, { agent }, (response) => {
      response.resume()
      resolve(response.statusCode as number)
    }).on('error', resolve)
  })
}

describe('egress guard: node:http agents (for ws and other node:http clients)', () => {
  let target: Awaited<ReturnType<typeof countingServer>>
  before(async () => {
    target = await countingServer((_request, response) => response.writeHead(204).end())
  })
  after(() => new Promise<void>((resolve) => target.server.close(() => resolve())))

  it('refuses IP literals before connecting and names through the lookup', async () => {
    const guard = createEgressGuard([])
    for (const host of ['127.0.0.1', '[::1]', '[::ffff:127.0.0.1]', 'localhost']) {
      const outcome = await httpGet(`http://${host}:${target.port}/`, guard.httpAgent)
      assert.ok(outcome instanceof EgressDeniedError, `${host}: ${String(outcome)}`)
    }
    assert.ok((await httpGet('http://169.254.169.254/', guard.httpAgent)) instanceof EgressDeniedError)
    assert.equal(target.connections(), 0)
    guard.httpAgent.destroy()
  })

  it('connects where TANDEM_EGRESS_ALLOW opens the range', async () => {
    const guard = createEgressGuard(['127.0.0.0/8'])
    assert.equal(await httpGet(`http://127.0.0.1:${target.port}/`, guard.httpAgent), 204)
    assert.equal(await httpGet(`http://localhost:${target.port}/`, guard.httpAgent), 204)
    assert.ok(target.connections() >= 1)
    guard.httpAgent.destroy()
  })
})

describe('TANDEM_EGRESS_ALLOW', () => {
  it('is a comma-separated list of CIDRs, empty by default', () => {
    assert.deepEqual(loadConfig({}).egressAllow, [])
    assert.deepEqual(loadConfig({ TANDEM_EGRESS_ALLOW: '127.0.0.0/8, 10.1.0.0/16,fd00::/8' }).egressAllow, ['127.0.0.0/8', '10.1.0.0/16', 'fd00::/8'])
  })

  for (const bad of ['127.0.0.1', 'localhost/8', '10.0.0.0/33', '::/129', '127.0.0.0/8,']) {
    it(`refuses ${JSON.stringify(bad)} naming the variable`, () => {
      assert.throws(() => loadConfig({ TANDEM_EGRESS_ALLOW: bad }), (error: unknown) => {
        assert.ok(error instanceof ConfigError)
        assert.match(error.message, /^TANDEM_EGRESS_ALLOW: /)
        assert.doesNotMatch(error.message, /\n/)
        return true
      })
    })
  }
})
