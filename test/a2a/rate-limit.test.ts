// /a2a spends the one rate-limit budget of /api and /mcp: in one instance's memory without Redis, and across
// instances through Redis (a Redis of the test's own), on both databases.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { TEST_SECRET_KEY, build, dialects, freshDatabase, send, type TestDatabase } from '../helpers.js'
import { freePort, startRedis } from '../redis.js'
import { NIL, createCycle, createStream } from '../runs/setup.js'
import { expose, keyFor, listen, rpc } from './setup.js'
import { bearer } from '../auth.js'


// An hour's window: a loaded machine's slow requests never see the window roll over mid-test.
const ENV = { TANDEM_RATE_LIMIT: '10/hour', TANDEM_PEER_RATE_LIMIT: 'off' }

/** An exposed cycle and a member's key (the set-up spends the local admin's budget, not the member's). */
async function exposedCycle(app: FastifyInstance): Promise<{ cycleId: string; auth: Record<string, string> }> {
  const streamId = await createStream(app)
  const cycleId = await createCycle(app, streamId, [{ agentId: NIL, operatorPool: ['@maria'], name: 'Sign' }], 'sign')
  await expose(app, streamId, cycleId)
  return { cycleId, auth: bearer(await keyFor(app, 'otto')) }
}

const getTask = (base: string, cycleId: string, auth: Record<string, string>) => rpc(base, cycleId, 'GetTask', { id: NIL }, auth)

for (const dialect of dialects()) {
  describe(`A2A rate limits (${dialect})`, () => {
    it('one instance: /api and /a2a spend one budget per key', async () => {
      const app = await build(dialect, ENV)
      try {
        const base = await listen(app)
        const { cycleId, auth } = await exposedCycle(app)
        const statuses: number[] = []
        for (let i = 0; i < 5; i++) {
          statuses.push((await send(app, 'GET', '/api/agents', undefined, auth)).statusCode)
          statuses.push((await getTask(base, cycleId, auth)).status)
        }
        assert.deepEqual(statuses, Array(10).fill(200))
        const limited = await getTask(base, cycleId, auth)
        assert.equal(limited.status, 429)
        assert.equal(limited.body.type, 'urn:tandem:problem:rate-limited')
        assert.ok(Number(limited.headers.get('retry-after')) >= 1)
        assert.equal((await send(app, 'GET', '/api/agents', undefined, auth)).statusCode, 429)
      } finally {
        await app.close()
      }
    })

    describe('two instances through Redis', () => {
      let database: TestDatabase
      let redis: ChildProcess
      let instances: FastifyInstance[]
      before(async () => {
        const port = await freePort()
        redis = await startRedis(port)
        database = await freshDatabase(dialect)
        const config = loadConfig({ LOG_LEVEL: 'silent', TANDEM_SECRET_KEY: TEST_SECRET_KEY, TANDEM_WORKERS: '0', TANDEM_AUTH: 'local', ...ENV, TANDEM_REDIS_URL: `redis://127.0.0.1:${port}`, DATABASE_URL: database.url })
        instances = []
        for (let i = 0; i < 2; i++) {
          const app = await buildApp(config, { connect: { schema: database.schema, poolSize: 2 } })
          await listen(app)
          instances.push(app)
        }
      })
      after(async () => {
        for (const app of instances) await app.close()
        redis.kill('SIGKILL')
        await database.drop()
      })

      it('/a2a on one instance and /api on the other spend one budget', async () => {
        const [one, two] = instances as [FastifyInstance, FastifyInstance]
        const { cycleId, auth } = await exposedCycle(one)
        const statuses: number[] = []
        for (let i = 0; i < 6; i++) {
          statuses.push((await getTask(one.listeningOrigin, cycleId, auth)).status)
          statuses.push((await send(two, 'GET', '/api/agents', undefined, auth)).statusCode)
        }
        assert.deepEqual(statuses, [...Array(10).fill(200), 429, 429])
        assert.equal((await getTask(two.listeningOrigin, cycleId, auth)).status, 429)
      })
    })
  })
}
