// test lane: clock — server processes killed (SIGKILL) and restarted (scripts/test.mjs).
// One way to write, across a crash: a trigger and a webhook create with an
// Idempotency-Key store their answer in the transaction of their writes. A real server kills itself (SIGKILL)
// after the commit and before answering; after a restart the retry gets the original answer and finds one run
// per cycle / one webhook — on SQLite and on PostgreSQL. The webhook's secret is withheld from the replay.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { startServer } from '../child-server.js'
import { dialects, freshDatabase } from '../helpers.js'

const json = (base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  fetch(`${base}${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })

async function setUp(base: string): Promise<string> {
  const agent = (await (await json(base, 'POST', '/api/agents', { name: 'Crash agent', endpointUrl: 'http://127.0.0.1:9/never' })).json()) as { id: string }
  const stream = (await (await json(base, 'POST', '/api/streams', { name: `Crash ${randomUUID().slice(0, 8)}` })).json()) as { id: string }
  for (let i = 0; i < 2; i++) {
    const cycle = await json(base, 'POST', `/api/cycles/streams/${stream.id}/cycles`, {
      triggerName: 'crash-me',
      description: 'crash',
      phasesTemplate: [{ id: randomUUID(), agentId: agent.id, goal: 'g', instructions: 'i', autoAdvance: true, phaseName: 'One', operatorPool: [] }],
    })
    assert.equal(cycle.status, 201, await cycle.text())
  }
  return stream.id
}

const runsOf = async (base: string, streamId: string) =>
  ((await (await json(base, 'GET', `/api/cycles/streams/${streamId}/runs?limit=100`)).json()) as { data: Array<{ id: string }> }).data.map((r) => r.id).sort()

for (const dialect of dialects()) {
  describe(`service writes across a crash (${dialect})`, () => {
    it('a trigger killed after its commit: the retry replays the original answer and no run starts twice', { timeout: 60000 }, async () => {
      const database = await freshDatabase(dialect, { ownDatabase: true })
      try {
        const setup = startServer({ DATABASE_URL: database.url, TANDEM_WORKERS: '0' })
        let streamId: string
        try {
          streamId = await setUp(await setup.url)
        } finally {
          await setup.stop()
        }
        const crashing = startServer({ DATABASE_URL: database.url, TANDEM_WORKERS: '0', TANDEM_TEST_FAULT: 'idempotency:after-commit' })
        await assert.rejects(json(await crashing.url, 'POST', `/api/streams/${streamId}/triggers/crash-me`, { input: {} }, { 'idempotency-key': 'trigger-1' }))
        assert.equal((await crashing.exited).signal, 'SIGKILL')

        const server = startServer({ DATABASE_URL: database.url, TANDEM_WORKERS: '0' })
        try {
          const base = await server.url
          const runs = await runsOf(base, streamId)
          assert.equal(runs.length, 2, 'the committed trigger started one run per cycle')
          const retry = await json(base, 'POST', `/api/streams/${streamId}/triggers/crash-me`, { input: {} }, { 'idempotency-key': 'trigger-1' })
          assert.equal(retry.status, 202)
          assert.equal(retry.headers.get('idempotent-replayed'), 'true')
          const answer = (await retry.json()) as { runs: Array<{ id: string; status: string }> }
          assert.deepEqual(answer.runs.map((r) => r.id).sort(), runs)
          assert.ok(answer.runs.every((r) => Object.keys(r).sort().join() === 'id,status'), 'the answer carries ids and statuses, not whole runs')
          assert.deepEqual(await runsOf(base, streamId), runs, 'no run started twice')
        } finally {
          await server.stop()
        }
      } finally {
        await database.drop()
      }
    })

    it('a webhook create killed after its commit: one webhook, the original answer without its secret', { timeout: 60000 }, async () => {
      const database = await freshDatabase(dialect, { ownDatabase: true })
      try {
        const body = { url: 'https://hooks.example.com/in', events: ['*'] }
        const crashing = startServer({ DATABASE_URL: database.url, TANDEM_WORKERS: '0', TANDEM_TEST_FAULT: 'idempotency:after-commit' })
        await assert.rejects(json(await crashing.url, 'POST', '/api/webhooks', body, { 'idempotency-key': 'hook-1' }))
        assert.equal((await crashing.exited).signal, 'SIGKILL')

        const server = startServer({ DATABASE_URL: database.url, TANDEM_WORKERS: '0' })
        try {
          const base = await server.url
          const list = (await (await json(base, 'GET', '/api/webhooks')).json()) as { data: Array<{ id: string }> }
          assert.equal(list.data.length, 1, 'the committed create kept its webhook')
          const retry = await json(base, 'POST', '/api/webhooks', body, { 'idempotency-key': 'hook-1' })
          assert.equal(retry.status, 201)
          assert.equal(retry.headers.get('idempotent-replayed'), 'true')
          assert.equal(retry.headers.get('location'), `/api/webhooks/${list.data[0]!.id}`)
          const replayed = (await retry.json()) as Record<string, unknown>
          assert.equal(replayed.id, list.data[0]!.id)
          assert.equal(replayed.secret, undefined, 'the secret is not kept for replays')
          assert.equal(((await (await json(base, 'GET', '/api/webhooks')).json()) as { data: unknown[] }).data.length, 1)
        } finally {
          await server.stop()
        }
      } finally {
        await database.drop()
      }
    })
  })
}
