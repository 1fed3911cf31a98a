// GET /metrics: Prometheus text with route templates (never raw ids), process and event-loop metrics, the
// service's own series, and the token rule off a loopback bind.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { bearer } from '../auth.js'

const SERVICE_SERIES = [
  'http_request_duration_seconds',
  'tandem_runs_total',
  'tandem_tasks_total',
  'tandem_task_delivery_duration_seconds',
  'tandem_tasks_waiting',
  'tandem_sse_clients',
  'tandem_webhook_deliveries_total',
  'tandem_db_pool_in_use',
  'tandem_rate_limit_store_errors_total',
]

for (const dialect of dialects()) {
  describe(`metrics (${dialect})`, () => {
    let app: FastifyInstance
    before(async () => {
      app = await build(dialect)
    })
    after(() => app.close())

    it('serves the Prometheus text format with every series declared', async () => {
      const res = await send(app, 'GET', '/metrics')
      assert.equal(res.statusCode, 200)
      assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/)
      for (const name of [...SERVICE_SERIES, 'process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds']) {
        assert.match(res.body, new RegExp(`^# TYPE ${name} `, 'm'), name)
      }
    })

    it('labels request durations by method, route template and status, never by raw id', async () => {
      const created = await send(app, 'POST', '/api/agents', { name: 'Metered' })
      assert.equal(created.statusCode, 201)
      const id = created.json().id as string
      assert.equal((await send(app, 'GET', `/api/agents/${id}`)).statusCode, 200)
      assert.equal((await send(app, 'GET', `/api/agents/${id.toUpperCase()}`)).statusCode, 200)
      assert.equal((await send(app, 'GET', '/api/agents/0190a2b4-0000-7000-8000-000000000000')).statusCode, 404)
      assert.equal((await send(app, 'GET', `/api/nowhere/${id}`)).statusCode, 404)
      const body = (await send(app, 'GET', '/metrics')).body
      assert.match(body, /^http_request_duration_seconds_count\{method="GET",route="\/api\/agents\/:id",status="200"\} 2$/m)
      assert.match(body, /^http_request_duration_seconds_count\{method="GET",route="\/api\/agents\/:id",status="404"\} 1$/m)
      assert.match(body, /^http_request_duration_seconds_count\{method="POST",route="\/api\/agents",status="201"\} 1$/m)
      assert.match(body, /^http_request_duration_seconds_count\{method="GET",route="unmatched",status="404"\} 1$/m)
      assert.equal(body.toLowerCase().includes(id.toLowerCase()), false, 'no raw id in any label')
      assert.doesNotMatch(body, /route="[^"]*[0-9a-f]{8}-[0-9a-f]{4}-/i)
    })

    if (dialect === 'postgres') {
      it('reports the connections checked out of the pool', async () => {
        const body = (await send(app, 'GET', '/metrics')).body
        assert.match(body, /^tandem_db_pool_in_use \d+$/m)
      })
    }
  })
}

describe('metrics off a loopback bind', () => {
  const token = 'metrics-token-0123456789'
  let withToken: FastifyInstance
  let withoutToken: FastifyInstance
  before(async () => {
    withToken = await build('sqlite', { HOST: '0.0.0.0', TANDEM_METRICS_TOKEN: token })
    withoutToken = await build('sqlite', { HOST: '0.0.0.0' })
  })
  after(async () => {
    await withToken.close()
    await withoutToken.close()
  })

  it('does not exist without TANDEM_METRICS_TOKEN', async () => {
    const res = await send(withoutToken, 'GET', '/metrics')
    assert.equal(res.statusCode, 404)
    assert.equal(res.json().type, 'urn:tandem:problem:not-found')
  })

  it('needs the token as a Bearer header', async () => {
    for (const authorization of [undefined, 'Bearer wrong-token-wrong-token', `Basic ${token}`, `Bearer ${token}x`]) {
      const res = await send(withToken, 'GET', '/metrics', undefined, authorization ? { authorization } : {})
      assert.equal(res.statusCode, 401, String(authorization))
      assert.equal(res.json().type, 'urn:tandem:problem:unauthorized')
      assert.doesNotMatch(res.body, /http_request_duration_seconds/)
    }
    const ok = await send(withToken, 'GET', '/metrics', undefined, bearer(token))
    assert.equal(ok.statusCode, 200)
    assert.match(ok.body, /^# TYPE tandem_runs_total counter$/m)
  })
})

// with TANDEM_AUTH=required on a loopback bind (the reverse-proxy set-up), a proxied request read the metrics.
describe('metrics behind a reverse proxy on a loopback bind', () => {
  const token = 'metrics-token-0123456789'
  const proxied = { host: 'tandem.example.com', 'x-forwarded-for': '203.0.113.9' }
  let required: FastifyInstance
  let requiredWithToken: FastifyInstance
  before(async () => {
    required = await build('sqlite', { HOST: '127.0.0.1', TANDEM_AUTH: 'required' })
    requiredWithToken = await build('sqlite', { HOST: '127.0.0.1', TANDEM_AUTH: 'required', TANDEM_METRICS_TOKEN: token })
  })
  after(async () => {
    await required.close()
    await requiredWithToken.close()
  })

  it('is a 404 without TANDEM_METRICS_TOKEN, proxied or direct', async () => {
    for (const headers of [proxied, {}]) {
      const res = await send(required, 'GET', '/metrics', undefined, headers)
      assert.equal(res.statusCode, 404)
      assert.doesNotMatch(res.body, /http_request_duration_seconds/)
    }
  })

  it('needs the token when TANDEM_METRICS_TOKEN is set', async () => {
    assert.equal((await send(requiredWithToken, 'GET', '/metrics', undefined, proxied)).statusCode, 401)
    assert.equal((await send(requiredWithToken, 'GET', '/metrics', undefined, { ...proxied, authorization: `Bearer ${token}` })).statusCode, 200)
  })

  it('stays open in local mode, to direct requests only', async () => {
    const local = await build('sqlite', { HOST: '127.0.0.1', TANDEM_AUTH: 'local' })
    try {
      assert.equal((await send(local, 'GET', '/metrics')).statusCode, 200)
      assert.equal((await send(local, 'GET', '/metrics', undefined, proxied)).statusCode, 403)
    } finally {
      await local.close()
    }
  })
})
