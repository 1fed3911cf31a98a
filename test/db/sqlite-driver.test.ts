// The SQLite driver (src/db/sqlite-driver.ts): group commit with per-transaction atomicity, nobody told of a
// commit before it is durable, reads outside transactions seeing committed rows only; the WAL checkpointer thread.
// A second, plain better-sqlite3 connection on the file shows what is committed.
import { after, before, beforeEach, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { closeSync, openSync, readSync, statSync } from 'node:fs'
import SqliteDatabase from 'better-sqlite3'
import { sql, type Kysely } from 'kysely'
import { connect, WAL_SIZE_LIMIT_BYTES, type Db } from '../../src/db/connect.js'
import { MAX_BATCH, sqliteDriverOf, type BatchingSqliteDriver } from '../../src/db/sqlite-driver.js'
import { Checkpointer, RESTART_FRAMES } from '../../src/db/checkpointer.js'
import { freshDatabase, type TestDatabase } from '../helpers.js'
import { waitFor } from '../wait.js'

type AnyDb = Kysely<any>

describe('SQLite driver: group commit', () => {
  let fresh: TestDatabase
  let database: Db
  let db: AnyDb
  let driver: BatchingSqliteDriver
  let observer: SqliteDatabase.Database
  const committedNames = () => (observer.prepare('select name from items order by name').all() as Array<{ name: string }>).map((r) => r.name)
  const insert = (trx: AnyDb, name: string) => trx.insertInto('items').values({ name }).execute()
  /**
   * Transactions begun together, after a lead one: a lone writer commits at once (no other commit in this turn of
   * the loop or the last), so the lead one takes that, and the others form a batch.
   */
  const together = (work: Array<(trx: AnyDb) => Promise<unknown>>) => {
    const lead = db.transaction().execute((trx) => trx.insertInto('leads').values({ at: Date.now() }).execute())
    return [lead, ...work.map((w) => db.transaction().execute(w))].slice(1)
  }
  /** Two turns of the loop without a commit: the next transaction is a lone writer. */
  const quiet = async () => {
    for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve))
  }
  /** Runs `check` in the check phase before the driver's own commit (setImmediate callbacks run in order). */
  const beforeTheBatchCommits = <T>(check: () => T | Promise<T>) => new Promise<T>((resolve, reject) => setImmediate(() => Promise.resolve().then(check).then(resolve, reject)))

  before(async () => {
    fresh = await freshDatabase('sqlite')
    database = connect(fresh.url)
    db = database.db as unknown as AnyDb
    driver = sqliteDriverOf(db) as BatchingSqliteDriver
    await sql`create table items (name text primary key)`.execute(db)
    await sql`create table leads (at integer)`.execute(db)
    await sql`create table parents (id integer primary key)`.execute(db)
    await sql`create table children (id integer primary key, parent_id integer references parents (id) deferrable initially deferred)`.execute(db)
    observer = new SqliteDatabase(fresh.url.slice('sqlite:'.length), { readonly: true })
  })
  after(async () => {
    observer.close()
    await database.close()
    await fresh.drop()
  })
  beforeEach(async () => {
    await sql`delete from items`.execute(db)
    await quiet()
  })

  it('commits transactions begun in one turn of the loop together, and tells each only once the batch is committed', async () => {
    const before = { ...driver.stats }
    const settled: string[] = []
    const seenBeforeCommit = beforeTheBatchCommits(() => ({ committed: committedNames(), settled: [...settled] }))
    const names = ['a', 'b', 'c', 'd']
    await Promise.all(together(names.map((name) => (trx) => insert(trx, name))).map((done, i) => done.then(() => settled.push(names[i] as string))))
    // Every transaction had run and released its savepoint, but the batch was not committed: nobody was told.
    assert.deepEqual(await seenBeforeCommit, { committed: [], settled: [] })
    assert.deepEqual(committedNames(), names)
    assert.equal(driver.stats.commits - before.commits, 2, 'one COMMIT for the lead transaction, one for the batch')
    assert.equal(driver.stats.transactions - before.transactions, 5)
  })

  it('a transaction that fails is rolled back alone; the others of its batch commit', async () => {
    const before = { ...driver.stats }
    const outcomes = await Promise.allSettled(
      together([
        (trx) => insert(trx, 'first'),
        async (trx) => {
          await insert(trx, 'failing')
          throw new Error('changed its mind')
        },
        (trx) => insert(trx, 'third'),
      ]),
    )
    assert.deepEqual(outcomes.map((o) => o.status), ['fulfilled', 'rejected', 'fulfilled'])
    assert.deepEqual(committedNames(), ['first', 'third'])
    assert.equal(driver.stats.commits - before.commits, 2, 'the lead transaction, then the batch')
  })

  it('a query outside any transaction commits the open batch before it runs: it never reads uncommitted rows', async () => {
    const before = { ...driver.stats }
    const read = beforeTheBatchCommits(async () => {
      assert.deepEqual(committedNames(), [], 'the batch is still open')
      const rows = await db.selectFrom('items').select('name').orderBy('name').execute()
      return { rows: rows.map((r) => r.name), committed: committedNames() }
    })
    await Promise.all(together(['x', 'y'].map((name) => (trx) => insert(trx, name))))
    assert.deepEqual(await read, { rows: ['x', 'y'], committed: ['x', 'y'] })
    assert.equal(driver.stats.commits - before.commits, 2)
  })

  it('a COMMIT that fails fails every transaction of the batch, and none of their rows is kept', async () => {
    // A deferred foreign key is checked at COMMIT: one bad transaction makes the whole batch's COMMIT fail.
    const outcomes = await Promise.allSettled(
      together([
        (trx) => insert(trx, 'innocent'),
        async (trx) => {
          await insert(trx, 'orphan-maker')
          await sql`insert into children (id, parent_id) values (1, 999)`.execute(trx)
        },
      ]),
    )
    assert.deepEqual(outcomes.map((o) => o.status), ['rejected', 'rejected'])
    assert.match(String((outcomes[0] as PromiseRejectedResult).reason), /FOREIGN KEY/)
    assert.deepEqual(committedNames(), [])
    // The connection is usable afterwards.
    await db.transaction().execute((trx) => insert(trx, 'after'))
    assert.deepEqual(committedNames(), ['after'])
  })

  it('when SQLite rolls the whole transaction back itself, the other transactions of the batch fail too', async () => {
    const outcomes = await Promise.allSettled(
      together([
        (trx) => insert(trx, 'earlier'),
        async (trx) => {
          await insert(trx, 'doomed')
          // What SQLITE_FULL or an I/O error does: the transaction is gone, not just the statement.
          await sql`rollback`.execute(trx)
          throw new Error('disk full')
        },
      ]),
    )
    assert.deepEqual(outcomes.map((o) => o.status), ['rejected', 'rejected'])
    assert.deepEqual(committedNames(), [])
    await db.transaction().execute((trx) => insert(trx, 'later'))
    assert.deepEqual(committedNames(), ['later'])
  })

  it('afterCommit: a hook runs once its transaction\'s batch has committed, and is abandoned with a rolled-back transaction or a failed COMMIT', async () => {
    const events: string[] = []
    const hook = (name: string) => ({
      // What the hook sees is committed: a second connection reads the row.
      committed: () => events.push(`${name} committed, visible: ${committedNames().includes(name)}`),
      abandoned: () => events.push(`${name} abandoned`),
    })
    assert.equal(driver.afterCommit(hook('outside')), false, 'no transaction holds the connection')
    const outcomes = await Promise.allSettled(
      together([
        async (trx) => {
          await insert(trx, 'kept')
          assert.equal(driver.afterCommit(hook('kept')), true)
        },
        async (trx) => {
          await insert(trx, 'dropped')
          driver.afterCommit(hook('dropped'))
          throw new Error('changed its mind')
        },
      ]),
    )
    assert.deepEqual(outcomes.map((o) => o.status), ['fulfilled', 'rejected'])
    await quiet()
    assert.deepEqual(events, ['dropped abandoned', 'kept committed, visible: true'])

    // A batch whose COMMIT fails (a deferred foreign key) abandons its transactions' hooks; none runs as committed.
    events.length = 0
    await Promise.allSettled(
      together([
        async (trx) => {
          await insert(trx, 'innocent')
          driver.afterCommit(hook('innocent'))
        },
        async (trx) => {
          await sql`insert into children (id, parent_id) values (2, 998)`.execute(trx)
          driver.afterCommit(hook('orphan'))
        },
      ]),
    )
    await quiet()
    assert.deepEqual(events.sort(), ['innocent abandoned', 'orphan abandoned'])
  })

  it('writeInBatch: one statement joins the open batch and is told once the batch commits; not while a transaction holds the connection', async () => {
    let inside: Promise<void> | undefined | 'not called' = 'not called'
    const [first] = together([
      async (trx) => {
        await insert(trx, 'first')
        inside = driver.writeInBatch('insert into items (name) values (?)', ['inside'])
      },
    ])
    await first
    assert.equal(inside, undefined, 'refused while a transaction holds the connection')
    const seenBeforeCommit = beforeTheBatchCommits(() => committedNames())
    const written = driver.writeInBatch('insert into items (name) values (?)', ['joined']) as Promise<void>
    const others = together([(trx) => insert(trx, 'member')])
    assert.deepEqual(await seenBeforeCommit, ['first'], 'written into the batch, not committed on its own')
    await Promise.all([written, ...others])
    assert.deepEqual(committedNames(), ['first', 'joined', 'member'])
    // A statement that fails is undone alone and throws; the batch it joined goes on.
    const member = together([(trx) => insert(trx, 'second member')])
    const failed = await beforeTheBatchCommits(() => {
      try {
        return driver.writeInBatch('insert into items (name) values (?)', ['joined']) === undefined ? 'refused' : 'written'
      } catch (error) {
        return String(error)
      }
    })
    assert.match(failed, /UNIQUE/)
    await Promise.all(member)
    assert.deepEqual(committedNames(), ['first', 'joined', 'member', 'second member'])
  })

  it('atBatchCommit: a write handed over runs at the batch\'s end; dropped with a transaction that rolls back; read early through runBatchWrites', async () => {
    const write = (name: string) => driver.atBatchCommit('insert into items (name) values (?)', [name])
    const count = async (trx: AnyDb, name: string) => Number((await sql<{ n: number }>`select count(*) as n from items where name = ${name}`.execute(trx)).rows[0]!.n)
    assert.equal(write('outside'), false, 'no transaction holds the connection')
    const outcomes = await Promise.allSettled(
      together([
        async (trx) => {
          await insert(trx, 'a')
          assert.equal(write('a handed over'), true)
          return count(trx, 'a handed over')
        },
        async (trx) => {
          await insert(trx, 'b')
          write('b handed over')
          throw new Error('changed its mind')
        },
        // Reads what the batch's earlier transaction handed over, then rolls back: that write is due again.
        async (trx) => {
          driver.runBatchWrites()
          const seen = await count(trx, 'a handed over')
          throw new Error(`saw ${seen}, rolled back`)
        },
        async (trx) => {
          write('d handed over')
          driver.runBatchWrites()
          return [await count(trx, 'a handed over'), await count(trx, 'd handed over')]
        },
      ]),
    )
    assert.deepEqual(
      outcomes.map((o) => (o.status === 'fulfilled' ? o.value : String(o.reason))),
      [0, 'Error: changed its mind', 'Error: saw 1, rolled back', [1, 1]],
    )
    assert.deepEqual(committedNames(), ['a', 'a handed over', 'd handed over'])

    // One that fails at the batch's end fails the batch, as a failed COMMIT does: nothing of it is kept.
    await quiet()
    const failed = await Promise.allSettled(
      together([
        async (trx) => {
          await insert(trx, 'innocent')
          write('twice')
        },
        async () => {
          write('twice')
        },
      ]),
    )
    assert.deepEqual(failed.map((o) => o.status), ['rejected', 'rejected'])
    assert.match(String((failed[0] as PromiseRejectedResult).reason), /UNIQUE/)
    assert.deepEqual(committedNames(), ['a', 'a handed over', 'd handed over'])
    await db.transaction().execute((trx) => insert(trx, 'after'))
    assert.deepEqual(committedNames(), ['a', 'a handed over', 'after', 'd handed over'])
  })

  it(`a batch commits at once when it holds ${MAX_BATCH} transactions`, async () => {
    const before = { ...driver.stats }
    const names = Array.from({ length: MAX_BATCH * 2 + 5 }, (_, i) => `n${String(i).padStart(3, '0')}`)
    await Promise.all(together(names.map((name) => (trx) => insert(trx, name))))
    assert.equal(driver.stats.commits - before.commits, 4, 'the lead transaction, two full batches and the rest')
    assert.equal(committedNames().length, names.length)
  })

  it('a lone writer (no other commit in this turn of the loop or the last) commits at once, without waiting for the turn to end', async () => {
    const before = { ...driver.stats }
    const seenBeforeTurnEnds = beforeTheBatchCommits(() => committedNames())
    await db.transaction().execute((trx) => insert(trx, 'alone'))
    assert.deepEqual(await seenBeforeTurnEnds, ['alone'])
    assert.equal(driver.stats.commits - before.commits, 1)
  })

  it('transactions of one batch see each other\'s rows, as if they had run one after the other', async () => {
    const counts = await Promise.all(
      ['p', 'q', 'r'].map((name) =>
        db.transaction().execute(async (trx) => {
          await insert(trx, name)
          return Number((await sql<{ n: number }>`select count(*) as n from items`.execute(trx)).rows[0]!.n)
        }),
      ),
    )
    assert.deepEqual(counts, [1, 2, 3])
  })

  it('closing commits an open batch', async () => {
    const other = await freshDatabase('sqlite')
    const second = connect(other.url)
    const seconddb = second.db as unknown as AnyDb
    await sql`create table items (name text primary key)`.execute(seconddb)
    const committed = seconddb.transaction().execute((trx) => insert(trx, 'kept'))
    await beforeTheBatchCommits(() => second.close())
    await committed
    const check = new SqliteDatabase(other.url.slice('sqlite:'.length), { readonly: true })
    assert.deepEqual(check.prepare('select name from items').all(), [{ name: 'kept' }])
    check.close()
    await other.drop()
  })

  it('every connect() to one file in this process shares its connection (a second one would wait on the batch, synchronously)', async () => {
    const again = connect(fresh.url)
    try {
      assert.equal(sqliteDriverOf(again.db), driver)
      await Promise.all([
        db.transaction().execute((trx) => insert(trx, 'from one')),
        (again.db as unknown as AnyDb).transaction().execute((trx) => insert(trx, 'from two')),
      ])
      assert.deepEqual(committedNames(), ['from one', 'from two'])
    } finally {
      await again.close()
    }
    // Closing one user leaves the connection open for the other.
    await db.transaction().execute((trx) => insert(trx, 'still open'))
    assert.ok(committedNames().includes('still open'))
  })
})

describe('SQLite WAL checkpoints on a thread of their own', () => {
  it('the main connection does not checkpoint; the thread does, while there are commits', async () => {
    const fresh = await freshDatabase('sqlite')
    const database = connect(fresh.url)
    const db = database.db as unknown as AnyDb
    try {
      const driver = sqliteDriverOf(db) as BatchingSqliteDriver
      assert.deepEqual(driver.raw.pragma('wal_autocheckpoint'), [{ wal_autocheckpoint: 0 }])
      await sql`create table items (name text primary key, body text)`.execute(db)
      const checkpointer = driver.checkpointer as Checkpointer
      // Commits, one every 10 ms, until the thread has checkpointed.
      let i = 0
      await waitFor(async () => {
        if (checkpointer.stats.checkpoints > 0) return true
        await db.transaction().execute((trx) => trx.insertInto('items').values({ name: `n${i++}`, body: 'x'.repeat(20000) }).execute())
        return false
      }, { everyMs: 10, what: 'the thread to checkpoint' })
      assert.equal(checkpointer.stats.mode, 'thread')
    } finally {
      await database.close()
      await fresh.drop()
    }
  })

  it('writes outside any transaction (… RETURNING ones too) are checkpointed as well', async () => {
    const fresh = await freshDatabase('sqlite')
    // The table is made by another connection: the driver's only writes are the inserts below.
    const setup = new SqliteDatabase(fresh.url.slice('sqlite:'.length))
    setup.exec('create table items (name text primary key, body text)')
    setup.close()
    const database = connect(fresh.url)
    const db = database.db as unknown as AnyDb
    try {
      const checkpointer = (sqliteDriverOf(db) as BatchingSqliteDriver).checkpointer as Checkpointer
      // Writes, one every 10 ms, until the thread has checkpointed.
      let i = 0
      await waitFor(async () => {
        if (checkpointer.stats.checkpoints > 0) return true
        await db.insertInto('items').values({ name: `n${i++}`, body: 'x'.repeat(20000) }).returning('name').execute()
        return false
      }, { everyMs: 10, what: 'the thread to checkpoint' })
    } finally {
      await database.close()
      await fresh.drop()
    }
  })

  it(`after a burst, the log file is cut back to its limit (${WAL_SIZE_LIMIT_BYTES / 1024 / 1024} MiB; 1 MiB here)`, async () => {
    const fresh = await freshDatabase('sqlite')
    const file = fresh.url.slice('sqlite:'.length)
    const database = connect(fresh.url, { walSizeLimitBytes: 1024 * 1024 })
    const db = database.db as unknown as AnyDb
    const walBytes = () => statSync(`${file}-wal`).size
    try {
      const driver = sqliteDriverOf(db) as BatchingSqliteDriver
      const defaults = connect(`sqlite:${file}.other`)
      try {
        assert.deepEqual((sqliteDriverOf(defaults.db) as BatchingSqliteDriver).raw.pragma('journal_size_limit'), [{ journal_size_limit: WAL_SIZE_LIMIT_BYTES }])
      } finally {
        await defaults.close()
      }
      await sql`create table items (name text primary key, body text)`.execute(db)
      // A burst of 8 MB in one transaction: the log grows past the limit.
      await db.transaction().execute(async (trx) => {
        for (let i = 0; i < 400; i++) await trx.insertInto('items').values({ name: `n${i}`, body: 'x'.repeat(20000) }).execute()
      })
      assert.ok(walBytes() > 4 * 1024 * 1024, `the log grew (${walBytes()} bytes)`)
      // A checkpoint begun after the burst's commit copies all of it (one that ran during the burst did not).
      const checkpointer = driver.checkpointer as Checkpointer
      const before = checkpointer.stats.checkpoints
      await waitFor(() => checkpointer.stats.checkpoints > before, { what: 'the thread to checkpoint after the burst' })
      // The next write restarts the log, which is then cut back (a few writes, should a checkpoint still be copying).
      let i = 0
      await waitFor(async () => {
        if (walBytes() <= 1024 * 1024) return true
        await db.transaction().execute((trx) => trx.insertInto('items').values({ name: `after${i++}`, body: 'y' }).execute())
        return false
      }, { everyMs: 50, what: 'the log to be cut back within its limit' })
    } finally {
      await database.close()
      await fresh.drop()
    }
  })

  it(`under sustained writes the log restarts once the thread has nearly copied it (past ${RESTART_FRAMES} frames), so its file stays small`, { timeout: 45000 }, async () => {
    const fresh = await freshDatabase('sqlite')
    const file = fresh.url.slice('sqlite:'.length)
    const database = connect(fresh.url)
    const db = database.db as unknown as AnyDb
    const MiB = 1024 * 1024
    const walBytes = () => statSync(`${file}-wal`).size
    // SQLite counts the log's restarts in its header (the checkpoint sequence number, bytes 12-15).
    const restartsSoFar = () => {
      const header = Buffer.alloc(16)
      const fd = openSync(`${file}-wal`, 'r')
      readSync(fd, header, 0, 16, 0)
      closeSync(fd)
      return header.readUInt32BE(12)
    }
    try {
      const checkpointer = (sqliteDriverOf(db) as BatchingSqliteDriver).checkpointer as Checkpointer
      await sql`create table items (id integer primary key, body blob)`.execute(db)
      // Small writes start the thread first (it loads a better-sqlite3 of its own), so that a slow machine
      // starting it does not let the load below grow the log unchecked.
      await waitFor(async () => {
        if (checkpointer.stats.checkpoints > 0) return true
        await db.transaction().execute((trx) => trx.insertInto('items').values({ body: Buffer.alloc(16) }).execute())
        return false
      }, { everyMs: 10, what: 'the thread to checkpoint' })
      const restartsBefore = restartsSoFar()

      // Eight writers commit rows of 4 KiB one after the other, 48 MiB at 6 MiB/s (about 12,000 pages of data,
      // far more than RESTART_FRAMES): there is always a commit under way, so the thread never finds all of the
      // log copied with no write after it. The pace is set, because the log's length between two restarts is
      // what is written in about two of the thread's periods: unpaced, a fast machine would make it longer. (And
      // fewer writers than a batch: a full batch commits at once, and the writers would never let the loop turn.)
      // They stop once it is all written and the main connection has finished a checkpoint, or early should the
      // log's file outgrow its bound: with nothing restarting the log, the file holds every page written. The log
      // restarts at about 1,000 pages (4 MiB); the bound, half of what is written, leaves room for a checkpoint
      // slowed by a busy disk (the thread's sync under a full CI run once let the log reach 16 MiB at 12 MiB/s).
      const WRITTEN = 48 * MiB
      const RATE = 6 * MiB
      const WAL_BOUND = 24 * MiB
      const body = Buffer.alloc(4096, 7)
      const started = Date.now()
      const deadline = started + 24_000
      let written = 0
      const done = () => (written >= WRITTEN && checkpointer.stats.finished > 0) || walBytes() > WAL_BOUND || Date.now() > deadline
      const writer = async () => {
        while (!done()) {
          if (written > ((Date.now() - started) / 1000) * RATE) {
            await new Promise((resolve) => setTimeout(resolve, 1)) // pacing to RATE, not waiting for anything
            continue
          }
          await db.transaction().execute((trx) => trx.insertInto('items').values({ body }).execute())
          written += body.length
        }
      }
      await Promise.all(Array.from({ length: 8 }, writer))

      const wal = `${(walBytes() / MiB).toFixed(1)} MiB`
      assert.ok(checkpointer.stats.finished > 0, `the main connection finished a checkpoint (log file ${wal}, ${(written / MiB).toFixed(1)} MiB written)`)
      assert.ok(restartsSoFar() > restartsBefore, 'the log restarted')
      assert.ok(written >= WRITTEN, `${(written / MiB).toFixed(1)} MiB written within the deadline`)
      assert.ok(walBytes() < WAL_BOUND, `the log's file stayed under ${WAL_BOUND / MiB} MiB (${wal}) while ${(written / MiB).toFixed(1)} MiB were written`)
      assert.equal(checkpointer.stats.mode, 'thread')
    } finally {
      await database.close()
      await fresh.drop()
    }
  })

  it('should the thread fail, SQLite\'s own auto-checkpoint comes back and the failure is reported', async () => {
    const fresh = await freshDatabase('sqlite')
    const raw = new SqliteDatabase(fresh.url.slice('sqlite:'.length))
    raw.pragma('journal_mode = WAL')
    const failures: unknown[] = []
    const checkpointer = new Checkpointer(raw, (error) => failures.push(error), 'throw new Error("no thread today")')
    assert.deepEqual(raw.pragma('wal_autocheckpoint'), [{ wal_autocheckpoint: 0 }])
    raw.exec('create table t (x)')
    checkpointer.committed()
    await waitFor(() => failures.length > 0, { what: 'the thread\'s failure to be reported' })
    assert.equal(failures.length, 1)
    assert.match(String(failures[0]), /no thread today/)
    assert.equal(checkpointer.stats.mode, 'inline')
    assert.deepEqual(raw.pragma('wal_autocheckpoint'), [{ wal_autocheckpoint: 1000 }])
    await checkpointer.close()
    raw.close()
    await fresh.drop()
  })
})
