// Prepared queries: compiled once per dialect and reused with new values, in and out of transactions;
// never reused for an executor with plugins (withSchema), and every argument must be a parameter.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { Expression } from 'kysely'
import type { FastifyInstance } from 'fastify'
import { prepared } from '../../src/db/prepared.js'
import { build, dialects, send } from '../helpers.js'

const byName = prepared(1, (db, name: Expression<string>) => db.selectFrom('agents').select(['id', 'name']).where('name', '=', name))

for (const dialect of dialects()) {
  describe(`prepared queries (${dialect})`, () => {
    let app: FastifyInstance
    before(async () => {
      app = await build(dialect)
      for (const name of ['one', 'two']) await send(app, 'POST', '/api/agents', { name })
    })
    after(() => app.close())

    it('runs with new values each call, on the database and inside a transaction', async () => {
      const { db } = app.database
      assert.deepEqual((await byName(db, 'one')).map((r) => r.name), ['one'])
      assert.deepEqual((await byName(db, 'two')).map((r) => r.name), ['two'])
      const inside = await db.transaction().execute(async (trx) => byName(trx, 'two'))
      assert.deepEqual(inside.map((r) => r.name), ['two'])
    })

    it('does not reuse SQL compiled without a plugin for an executor with one (withSchema)', async () => {
      const { db } = app.database
      assert.equal((await byName(db, 'one')).length, 1)
      // Compiled through the schema plugin: the table is looked up in a schema that does not exist.
      await assert.rejects(byName(db.withSchema('no_such_schema'), 'one'), /no_such_schema/)
      assert.equal((await byName(db, 'one')).length, 1, 'the cached SQL is still the plain one')
    })

    it('refuses a query that does not use an argument as a parameter', async () => {
      const unused = prepared(2, (db, name: Expression<string>, _ignored: Expression<string>) => db.selectFrom('agents').select('id').where('name', '=', name))
      await assert.rejects(unused(app.database.db, 'one', 'x'), /argument 1 does not reach the query as a parameter/)
    })
  })
}
