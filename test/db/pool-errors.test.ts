// An idle PostgreSQL connection ended by the server (pg_terminate_backend, a restart, a failover) must not crash
// the process: the pool drops it and the next query opens a new connection.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { sql } from 'kysely'
import { connect, type Db } from '../../src/db/connect.js'
import { dialects, freshDatabase, type TestDatabase } from '../helpers.js'
import { waitFor } from '../wait.js'

if (dialects().includes('postgres')) {
  describe('PostgreSQL pool', () => {
    let database: TestDatabase
    let db: Db
    before(async () => {
      database = await freshDatabase('postgres', { ownDatabase: true })
      db = connect(database.url, { poolSize: 2 })
    })
    after(async () => {
      await db.close()
      await database.drop()
    })

    it('survives the server ending its idle connections, and queries again', async () => {
      const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db.db)
      const pid = rows[0]!.pid
      const admin = connect(database.url, { poolSize: 1 })
      try {
        await sql`select pg_terminate_backend(${pid})`.execute(admin.db)
        // The server tells the client before its backend exits: once the backend is gone, the pool has been told.
        await waitFor(async () => (await sql<{ n: string }>`select count(*) as n from pg_stat_activity where pid = ${pid}`.execute(admin.db)).rows[0]?.n === '0', { what: `backend ${pid} to exit` })
      } finally {
        await admin.close()
      }
      const again = await sql<{ one: number }>`select 1 as one`.execute(db.db)
      assert.equal(again.rows[0]!.one, 1)
    })
  })
}
