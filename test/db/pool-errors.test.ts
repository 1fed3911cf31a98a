// An idle PostgreSQL connection ended by the server (pg_terminate_backend, a restart, a failover) must not crash
// the process: the pool drops it, says so, and the next query opens a new connection.
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
    const warnings: Array<{ message: string; error: unknown }> = []
    before(async () => {
      database = await freshDatabase('postgres', { ownDatabase: true })
      db = connect(database.url, { poolSize: 2, onWarning: (message, error) => warnings.push({ message, error }) })
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
      } finally {
        await admin.close()
      }
      // The server tells the client before its backend exits; the pool has dropped the connection once it says so.
      // (Waiting for the backend to leave pg_stat_activity was not enough: the client may not have read the socket yet.)
      await waitFor(() => warnings.length > 0, { what: 'the pool to drop the ended connection' })
      assert.equal(warnings[0]!.message, 'the database ended an idle connection; the pool opens a new one when needed')
      assert.equal((warnings[0]!.error as { code?: string }).code, '57P01')
      const again = await sql<{ one: number }>`select 1 as one`.execute(db.db)
      assert.equal(again.rows[0]!.one, 1)
    })
  })
}
