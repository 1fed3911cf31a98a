// test lane: clock — server processes killed (SIGKILL) and restarted (scripts/test.mjs).
// Atomic idempotency across a crash: a real server process kills itself (SIGKILL, through the
// TANDEM_TEST_FAULT seam) inside the transaction that holds both the new resource and its stored response,
// or just after it commits. After a restart, a retry with the same key gives one resource and the
// original response — on SQLite and on PostgreSQL.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { connect } from '../../src/db/connect.js'
import { startServer } from '../child-server.js'
import { dialects, freshDatabase } from '../helpers.js'

const post = (base: string, name: string, key: string) =>
  fetch(`${base}/api/agents`, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': key }, body: JSON.stringify({ name }) })

async function agentsNamed(base: string, name: string): Promise<string[]> {
  const page = (await (await fetch(`${base}/api/agents?limit=100`)).json()) as { data: Array<{ id: string; name: string }> }
  return page.data.filter((a) => a.name === name).map((a) => a.id)
}

/** Sets every claim's creation to `ms` before now, as if that much time had passed since (whatever the test's own pace). */
async function ageClaims(url: string, ms: number): Promise<void> {
  const { db, close } = connect(url)
  try {
    await db.updateTable('idempotency_requests').set({ created_at: new Date(Date.now() - ms).toISOString() }).execute()
  } finally {
    await close()
  }
}

for (const dialect of dialects()) {
  describe(`idempotency across a crash (${dialect})`, () => {
    it('killed inside the transaction: nothing is kept; once the claim is abandoned a retry creates exactly one', async () => {
      const database = await freshDatabase(dialect, { ownDatabase: true })
      try {
        const crashing = startServer({ DATABASE_URL: database.url, TANDEM_TEST_FAULT: 'idempotency:before-store' })
        await assert.rejects(post(await crashing.url, 'Crash', 'crash-inside'))
        assert.equal((await crashing.exited).signal, 'SIGKILL')

        // A long failover bound: the dead instance is not yet known dead, and the time-out alone releases its claim
        // (test/failover/idempotency.test.ts has the release by the instance's death).
        const server = startServer({ DATABASE_URL: database.url, TANDEM_FAILOVER_S: '3600' })
        try {
          const base = await server.url
          assert.deepEqual(await agentsNamed(base, 'Crash'), [], 'the rolled-back insert is not visible')
          // The dead request's claim counts as in flight until it is older than the request time-out.
          const early = await post(base, 'Crash', 'crash-inside')
          assert.equal(early.status, 409)
          assert.equal(early.headers.get('retry-after'), '1')
          await ageClaims(database.url, 100_000)
          assert.equal((await post(base, 'Crash', 'crash-inside')).status, 409, 'not yet older than the 120 s time-out')
          await ageClaims(database.url, 121_000)
          const retry = await post(base, 'Crash', 'crash-inside')
          assert.equal(retry.status, 201)
          const created = await retry.text()
          const replay = await post(base, 'Crash', 'crash-inside')
          assert.equal(replay.status, 201)
          assert.equal(replay.headers.get('idempotent-replayed'), 'true')
          assert.equal(await replay.text(), created)
          assert.deepEqual(await agentsNamed(base, 'Crash'), [JSON.parse(created).id])
        } finally {
          await server.stop()
        }
      } finally {
        await database.drop()
      }
    })

    it('killed after the commit, before answering: a retry gets the original response and nothing is created twice', async () => {
      const database = await freshDatabase(dialect, { ownDatabase: true })
      try {
        const crashing = startServer({ DATABASE_URL: database.url, TANDEM_TEST_FAULT: 'idempotency:after-commit' })
        await assert.rejects(post(await crashing.url, 'Committed', 'crash-after'))
        await crashing.exited

        const server = startServer({ DATABASE_URL: database.url })
        try {
          const base = await server.url
          const ids = await agentsNamed(base, 'Committed')
          assert.equal(ids.length, 1, 'the committed insert survived')
          const retry = await post(base, 'Committed', 'crash-after')
          assert.equal(retry.status, 201)
          assert.equal(retry.headers.get('idempotent-replayed'), 'true')
          assert.equal(retry.headers.get('location'), `/api/agents/${ids[0]}`)
          assert.equal(((await retry.json()) as { id: string }).id, ids[0])
          assert.deepEqual(await agentsNamed(base, 'Committed'), ids)
        } finally {
          await server.stop()
        }
      } finally {
        await database.drop()
      }
    })
  })
}
