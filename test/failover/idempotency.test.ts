// Idempotency keys after a crash: an instance SIGKILLed while it carries out a request with an Idempotency-Key
// leaves the key's claim behind; once the instance is known dead (its heartbeat stopped for half of
// TANDEM_FAILOVER_S) a retry carries the request out — one run — long before TANDEM_REQUEST_TIMEOUT_MS.
// PostgreSQL: the retry goes to another instance, running all along; SQLite: to the restarted process (the bound
// counts from its start).
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { request, serverGroup } from '../child-server.js'
import { dialects, freshDatabase } from '../helpers.js'
import { waitFor } from '../runs/agent-server.js'

const NIL = '00000000-0000-0000-0000-000000000000'
const BOUND_S = 6

for (const dialect of dialects()) {
  describe(`idempotency keys of a dead instance (${dialect})`, () => {
    it('a retry creates the one run within the failover bound, not after the request time-out', { timeout: 120000 }, async () => {
      const database = await freshDatabase(dialect, { ownDatabase: true })
      const env = { DATABASE_URL: database.url, TANDEM_AUTH: 'local', TANDEM_FAILOVER_S: String(BOUND_S), TANDEM_REQUEST_TIMEOUT_MS: '120000' }
      const servers = serverGroup(env, { stderr: 'ignore' })
      const faulty = serverGroup({ ...env, TANDEM_TEST_FAULT: 'idempotency:before-store' }, { stderr: 'ignore' })
      try {
        // Set-up through the faulty instance (the fault needs an Idempotency-Key); PostgreSQL: the other one runs alongside.
        const crashing = faulty.start()
        const survivor = dialect === 'postgres' ? servers.start() : undefined
        const crashingBase = await crashing.url
        let base = (await survivor?.url) ?? ''
        const streamId = (await request(crashingBase, 'POST', '/api/streams', { name: 'keys' })).json.id
        const phase = { id: randomUUID(), agentId: NIL, goal: 'g', instructions: 'i', autoAdvance: false, phaseName: 'Review', operatorPool: [] }
        assert.equal((await request(crashingBase, 'POST', `/api/cycles/streams/${streamId}/cycles`, { triggerName: 'go', description: 'd', phasesTemplate: [phase] })).status, 201)
        const key = { 'idempotency-key': 'retry-after-a-crash' }
        await assert.rejects(request(crashingBase, 'POST', `/api/streams/${streamId}/triggers/go`, {}, key))
        assert.equal((await crashing.exited).signal, 'SIGKILL')
        if (dialect === 'sqlite') base = await servers.start().url
        const from = Date.now() // the death (PostgreSQL) or the restart (SQLite)

        const statuses: number[] = []
        const created = await waitFor(async () => {
          const retry = await request(base, 'POST', `/api/streams/${streamId}/triggers/go`, {}, key)
          statuses.push(retry.status)
          if (retry.status === 409) await new Promise((resolve) => setTimeout(resolve, 200))
          return retry.status === 202 ? retry.json : undefined
        }, 30000, 'the retry to be carried out')
        const took = Date.now() - from
        assert.ok(statuses.every((status) => status === 409 || status === 202), `retries answered ${statuses.join(', ')}`)
        assert.ok(took < BOUND_S * 1000, `the key was released ${took} ms after the death (or the restart)`)
        assert.equal(created.runs.length, 1)
        const replay = await request(base, 'POST', `/api/streams/${streamId}/triggers/go`, {}, key)
        assert.deepEqual(replay.json, created, 'a later retry replays the answer')
        const runs = (await request(base, 'GET', `/api/cycles/streams/${streamId}/runs?limit=100`)).json.data
        assert.equal(runs.length, 1, 'one run')
        console.log(`idempotency (${dialect}): a dead instance's key released ${took} ms after its death or the restart (${statuses.length} retries)`)
      } finally {
        await faulty.stopAll('SIGKILL')
        await servers.stopAll()
        await database.drop()
      }
    })
  })
}
