// A transaction PostgreSQL aborts with a deadlock (40P01) or a serialization failure (40001) runs again from the
// start (src/db/retry.ts): a request whose transaction meets a real deadlock succeeds once, with its rows and its
// event once; one that fails on every attempt is a 503 with Retry-After and changes nothing. Effects handed to
// afterCommit run once, after the attempt that committed.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import pg from 'pg'
import { sql } from 'kysely'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { waitFor } from '../wait.js'
import { TRANSACTION_ATTEMPTS, TransactionContended, afterCommit, runTransaction } from '../../src/db/retry.js'

const POSTGRES_URL = process.env.TANDEM_TEST_POSTGRES_URL
const content = (text: string) => ({ blocks: [{ type: 'rich_text', elements: [{ type: 'paragraph', children: [{ type: 'text', text }] }] }] })
const noPause = async () => {}

for (const dialect of dialects()) {
  describe(`transactions run again after a deadlock or a serialization failure (${dialect})`, () => {
    let app: FastifyInstance
    before(async () => {
      app = await build(dialect)
    })
    after(() => app.close())

    it('runs afterCommit effects once the transaction commits, never for one that rolled back, and does not run again on other errors', async () => {
      const { db } = app.database
      const seen: string[] = []
      const result = await runTransaction(db, async (trx) => {
        afterCommit(trx, () => seen.push('committed'))
        assert.deepEqual(seen, [], 'the effect waits for the commit')
        return (await sql<{ one: number }>`select 1 as one`.execute(trx)).rows[0]?.one
      })
      assert.equal(result, 1)
      assert.deepEqual(seen, ['committed'])

      let runs = 0
      await assert.rejects(
        runTransaction(db, async (trx) => {
          runs++
          afterCommit(trx, () => seen.push('rolled back'))
          throw Object.assign(new Error('a unique violation'), { code: '23505' })
        }),
        /unique violation/,
      )
      assert.equal(runs, 1, 'only deadlocks and serialization failures are run again')
      assert.deepEqual(seen, ['committed'])

      await db.transaction().execute(async (trx) => afterCommit(trx, () => seen.push('not retried')))
      afterCommit(db, () => seen.push('outside'))
      assert.deepEqual(seen, ['committed', 'not retried', 'outside'], 'outside runTransaction an effect runs at once')
    })
  })
}

// The database's own errors, through the real driver: PostgreSQL only.
for (const dialect of dialects().filter((d) => d === 'postgres')) {
  describe(`deadlocks and serialization failures in requests (${dialect})`, () => {
    let app: FastifyInstance
    let schema: string
    let streamId: string
    let admin: pg.Client
    const q = (text: string) => admin.query(text)

    before(async () => {
      app = await build(dialect)
      schema = app.database.schema as string
      streamId = (await send(app, 'POST', '/api/streams', { name: 'contended' })).json().id
      admin = new pg.Client({ connectionString: POSTGRES_URL })
      await admin.connect()
      await q(`set search_path = ${schema}`)
      await q('create sequence attempts')
    })
    after(async () => {
      await admin.end()
      await app.close()
    })

    const messagesOf = async (text: string) => (await q(`select id from messages where stream_id = '${streamId}' and content like '%${text}%'`)).rows
    const eventsOf = async (text: string) => (await q(`select id from stream_events where stream_id = '${streamId}' and type = 'message.created' and data like '%${text}%'`)).rows
    const attempts = async () => Number((await q('select last_value from attempts')).rows[0].last_value)

    it('a request whose transaction is a deadlock\'s victim runs again and succeeds once: one message, one event', async () => {
      // The request's insert takes advisory lock 1 then waits for 2, which this test holds; the test then asks for 1.
      // The request's backend looks for deadlocks first (100 ms against the test's 10 s), so it is the one aborted.
      await q(`create function lock_in_order() returns trigger language plpgsql as $$ begin
        perform nextval('attempts');
        perform set_config('deadlock_timeout', '100ms', true);
        perform pg_advisory_xact_lock(4242001);
        perform pg_advisory_xact_lock(4242002);
        return new;
      end $$`)
      await q('create trigger lock_in_order before insert on messages for each row execute function lock_in_order()')
      const other = new pg.Client({ connectionString: POSTGRES_URL })
      await other.connect()
      try {
        await other.query('begin')
        await other.query(`set local deadlock_timeout = '10s'`)
        await other.query('select pg_advisory_xact_lock(4242002)')
        const posted = send(app, 'POST', `/api/chat/streams/${streamId}/messages`, { content: content('deadlocked once') })
        await waitFor(async () => (await q(`select 1 from pg_locks where locktype = 'advisory' and objid = 4242002 and not granted`)).rows.length > 0, { what: 'the request waiting for advisory lock 2' })
        // Closes the circle: the request's attempt is aborted with 40P01, which frees lock 1 for this transaction.
        await other.query('select pg_advisory_xact_lock(4242001)')
        await other.query('commit')
        const res = await posted
        assert.equal(res.statusCode, 201, res.body)
        assert.equal(await attempts(), 2, 'the first attempt was aborted, the second committed')
        assert.equal((await messagesOf('deadlocked once')).length, 1)
        assert.equal((await eventsOf('deadlocked once')).length, 1)
        assert.equal(res.json().id, (await messagesOf('deadlocked once'))[0].id)
      } finally {
        await other.end()
        await q('drop trigger if exists lock_in_order on messages')
      }
    })

    it(`after ${TRANSACTION_ATTEMPTS} failed attempts: a 503 problem with Retry-After, nothing written, and the Idempotency-Key free for the retry`, async () => {
      await q('alter sequence attempts restart')
      await q(`create function always_contended() returns trigger language plpgsql as $$ begin
        perform nextval('attempts');
        raise exception 'could not serialize access' using errcode = '40001';
      end $$`)
      await q('create trigger always_contended before insert on messages for each row execute function always_contended()')
      const headers = { 'idempotency-key': 'contended-1' }
      let res
      try {
        res = await send(app, 'POST', `/api/chat/streams/${streamId}/messages`, { content: content('never written') }, headers)
      } finally {
        await q('drop trigger always_contended on messages')
      }
      assert.equal(res.statusCode, 503, res.body)
      assert.equal(res.headers['retry-after'], '1')
      assert.match(String(res.headers['content-type']), /^application\/problem\+json/)
      const problem = res.json()
      assert.equal(problem.type, 'urn:tandem:problem:service-unavailable')
      assert.equal(problem.title, 'Service unavailable')
      assert.equal(problem.status, 503)
      assert.match(problem.detail, /nothing was changed/)
      assert.equal(await attempts(), TRANSACTION_ATTEMPTS)
      assert.equal((await messagesOf('never written')).length, 0)
      assert.equal((await eventsOf('never written')).length, 0)

      const retried = await send(app, 'POST', `/api/chat/streams/${streamId}/messages`, { content: content('never written') }, headers)
      assert.equal(retried.statusCode, 201, retried.body)
      assert.equal(retried.headers['idempotent-replayed'], undefined)
      assert.equal((await messagesOf('never written')).length, 1)
    })

    it('runTransaction: an effect handed to afterCommit runs once, after the attempt that committed', async () => {
      const { db } = app.database
      await q('alter sequence attempts restart')
      const effects: number[] = []
      let runs = 0
      const result = await runTransaction(
        db,
        async (trx) => {
          runs++
          afterCommit(trx, () => effects.push(runs))
          // The real driver's error on the first attempt: 40P01 raised by the server.
          if (runs === 1) await sql`do $$ begin raise exception 'deadlock detected' using errcode = '40P01'; end $$`.execute(trx)
          return runs
        },
        { pause: noPause },
      )
      assert.equal(result, 2)
      assert.deepEqual(effects, [2])

      const failing = runTransaction(db, (trx) => sql`do $$ begin raise exception 'deadlock detected' using errcode = '40P01'; end $$`.execute(trx), { pause: noPause })
      await assert.rejects(failing, (error: unknown) => error instanceof TransactionContended && error.code === '40P01')
    })
  })
}
