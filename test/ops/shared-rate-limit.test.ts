// The rate limit shared through Redis: two instances spend one budget; a Redis outage lets requests through
// (fail open), logged and counted, and the budget is shared again once Redis is back.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { TEST_SECRET_KEY, dialects, freshDatabase, send, type TestDatabase } from '../helpers.js'
import { freePort, startRedis } from '../redis.js'
import { bearer, createKey } from '../auth.js'


// Required mode: /metrics needs its token.
const METRICS_TOKEN = 'metrics-token-0123456789'

const metricValue = async (app: FastifyInstance, name: string) => {
  const body = (await send(app, 'GET', '/metrics', undefined, bearer(METRICS_TOKEN))).body
  return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(body)?.[1] ?? 'NaN')
}

for (const dialect of dialects()) {
  describe(`rate limit shared through Redis (${dialect})`, () => {
    let database: TestDatabase
    let redis: ChildProcess
    let port: number
    let instances: FastifyInstance[]
    let auth: Record<string, string>

    before(async () => {
      port = await freePort()
      redis = await startRedis(port)
      database = await freshDatabase(dialect)
      const env = { LOG_LEVEL: 'silent', TANDEM_SECRET_KEY: TEST_SECRET_KEY, TANDEM_WORKERS: '0', TANDEM_AUTH: 'required', TANDEM_METRICS_TOKEN: METRICS_TOKEN, TANDEM_RATE_LIMIT: '10/minute', TANDEM_PEER_RATE_LIMIT: 'off', TANDEM_REDIS_URL: `redis://127.0.0.1:${port}`, DATABASE_URL: database.url }
      instances = []
      for (let i = 0; i < 2; i++) {
        const app = await buildApp(loadConfig(env), { connect: { schema: database.schema, poolSize: 2 } })
        await app.ready()
        instances.push(app)
      }
      auth = (await createKey(instances[0]!, { name: 'shared', role: 'member' })).headers
    })
    after(async () => {
      for (const app of instances) await app.close()
      redis.kill('SIGKILL')
      await database.drop()
    })

    it('gives two instances one budget', async () => {
      const statuses: number[] = []
      for (let i = 0; i < 6; i++) {
        for (const app of instances) statuses.push((await send(app, 'GET', '/api/agents', undefined, auth)).statusCode)
      }
      assert.deepEqual(statuses.filter((s) => s === 200).length, 10, statuses.join(','))
      assert.deepEqual(statuses.slice(10), [429, 429])
      const limited = await send(instances[1]!, 'GET', '/api/agents', undefined, auth)
      assert.equal(limited.json().type, 'urn:tandem:problem:rate-limited')
      assert.ok(Number(limited.headers['retry-after']) >= 1)
    })

    it('fails open while Redis is down, counting each unchecked request', async () => {
      redis.kill('SIGKILL')
      await new Promise((resolve) => redis.once('exit', resolve))
      const before = await metricValue(instances[0]!, 'tandem_rate_limit_store_errors_total')
      for (let i = 0; i < 5; i++) {
        const res = await send(instances[0]!, 'GET', '/api/agents', undefined, auth)
        assert.equal(res.statusCode, 200, 'the API stays up although the budget was spent')
      }
      assert.equal(await metricValue(instances[0]!, 'tandem_rate_limit_store_errors_total'), before + 5)
    })

    it('counts in Redis again once it is back', async () => {
      redis = await startRedis(port)
      // ioredis reconnects on its own (at most every 2 s); until then requests pass uncounted. Probe each
      // instance until a request of its own is counted (its error counter stands still).
      let counted = 0
      for (const app of instances) {
        for (let attempt = 0; ; attempt++) {
          assert.ok(attempt < 40, 'the instance reconnected to Redis')
          const before = await metricValue(app, 'tandem_rate_limit_store_errors_total')
          assert.equal((await send(app, 'GET', '/api/agents', undefined, auth)).statusCode, 200)
          if ((await metricValue(app, 'tandem_rate_limit_store_errors_total')) === before) {
            counted++
            break
          }
          await sleep(250)
        }
      }
      const statuses: number[] = []
      for (let i = 0; i < 6; i++) {
        for (const app of instances) statuses.push((await send(app, 'GET', '/api/agents', undefined, auth)).statusCode)
      }
      assert.equal(statuses.filter((s) => s === 200).length, 10 - counted, statuses.join(','))
    })
  })
}
