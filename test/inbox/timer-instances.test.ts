// test lane: clock — several instances firing on the real clock (scripts/test.mjs).
// Two instances on one PostgreSQL database, started together while decision timers are pending: both re-arm the
// timers at start-up and both run jobs, yet each timer takes effect once — one reminder, one expiry per phase.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { dialects, freshDatabase, send, TEST_SECRET_KEY } from '../helpers.js'
import { waitFor } from '../runs/agent-server.js'
import { createStream, NIL } from '../runs/setup.js'
import { pendingCount } from '../clock.js'

const RUNS = 10

async function instance(url: string): Promise<FastifyInstance> {
  const app = await buildApp(loadConfig({ LOG_LEVEL: 'silent', TANDEM_WORKERS: '4', TANDEM_SECRET_KEY: TEST_SECRET_KEY, DATABASE_URL: url }), { connect: { poolSize: 4 } })
  await app.ready()
  return app
}

for (const dialect of dialects().filter((d) => d === 'postgres')) {
  describe(`decision timers across instances (${dialect})`, () => {
    it('each timer takes effect once when two instances start together and share the jobs', { timeout: 90000 }, async () => {
      const database = await freshDatabase(dialect, { ownDatabase: true })
      const apps: FastifyInstance[] = []
      try {
        const first = await instance(database.url)
        const streamId = await createStream(first, 'shared')
        const phase = { id: randomUUID(), agentId: NIL, goal: 'g', instructions: 'i', autoAdvance: false, phaseName: 'Review', operatorPool: [] }
        const saved = await send(first, 'POST', `/api/cycles/streams/${streamId}/cycles`, { triggerName: 'pay', description: 'd', phasesTemplate: [phase], policy: { decision: { remindAfter: 'PT5S', expireAfter: 'PT6S', onExpire: 'approve' } } })
        assert.equal(saved.statusCode, 201, saved.body)
        const runIds: string[] = []
        for (let i = 0; i < RUNS; i++) runIds.push((await send(first, 'POST', `/api/streams/${streamId}/triggers/pay`, {})).json().runs[0].id)
        await first.close()
        apps.push(...(await Promise.all([instance(database.url), instance(database.url)])))
        const [one] = apps as [FastifyInstance, FastifyInstance]
        const events = async () => (await send(one, 'GET', `/api/streams/${streamId}/events?limit=100`)).json().data as any[]
        await waitFor(async () => {
          for (const id of runIds) if ((await send(one, 'GET', `/api/runs/${id}`)).json().status !== 'succeeded') return undefined
          return true
        }, 30000, 'every run approved at expiry')
        // Until no decision timer's job is left on either instance (one running elsewhere finishes first).
        await waitFor(async () => ((await pendingCount(one, 'decision:')) === 0 ? true : undefined), 10000, 'no decision timer job left')
        const reminders = (await events()).filter((e) => e.type === 'decision.reminder').map((e) => e.data.runId).sort()
        assert.deepEqual(reminders, [...runIds].sort(), 'one reminder per run')
        for (const id of runIds) {
          const run = (await send(one, 'GET', `/api/runs/${id}`)).json()
          assert.deepEqual(run.phases[0].decisions.map((d: any) => d.handle), ['system'], 'one decision at expiry')
        }
      } finally {
        for (const app of apps) await app.close()
        await database.drop()
      }
    })
  })
}
