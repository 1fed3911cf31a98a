// Holds up a process's write so a test can kill it mid-way: SQLite — the database's write lock (BEGIN IMMEDIATE
// on the file; one writer per file, so the other process waits to take it); PostgreSQL — a row lock
// (`select … for update`) on one row, so a transaction that locks the same row waits on it. Call what it
// returns to release.
import SqliteDatabase from 'better-sqlite3'
import pg from 'pg'

export async function holdLock(dialect: string, url: string, row: { table: string; id: string }): Promise<() => Promise<void>> {
  if (dialect === 'sqlite') {
    const file = new SqliteDatabase(url.slice('sqlite:'.length))
    file.pragma('busy_timeout = 10000')
    file.prepare('BEGIN IMMEDIATE').run()
    return async () => {
      file.prepare('ROLLBACK').run()
      file.close()
    }
  }
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  await client.query('begin')
  await client.query(`select id from ${client.escapeIdentifier(row.table)} where id = $1 for update`, [row.id])
  return async () => {
    await client.query('rollback')
    await client.end()
  }
}

/**
 * PostgreSQL: whether another connection to the database waits on a lock (the row a test holds), so the test knows
 * the write it holds up has started. SQLite shows no such thing: a writer waiting for the file's write lock
 * waits inside its own process.
 */
export async function someoneWaitsOnALock(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query(`select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`)
    return rows.length > 0
  } finally {
    await client.end()
  }
}
