// Atomic idempotency across a crash: a real server process kills itself (SIGKILL, through the
// TANDEM_TEST_FAULT seam) inside the transaction that holds both the new resource and its stored response,
// or just after it commits. After a restart, a retry with the same key gives one resource and the
// original response — on SQLite and on PostgreSQL.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { connect } from '../../src/db/connect.js'
import { dialects, freshDatabase } from '../helpers.js'

function startServer(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const url = new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const match = /Tandem listening on (http:\/\/[^"\s]+)/.exec(line)
      if (match) resolve(match[1] as string)
    })
    child.on('exit', (code) => reject(new Error(`server exited with ${code}`)))
  })
  url.catch(() => {})
  return { child, url }
}

const post = (base: string, name: string, key: string) =>
  fetch(`${base}/api/agents`, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': key }, body: JSON.stringify({ name }) })

async function agentsNamed(base: string, name: string): Promise<string[]> {
  const page = (await (await fetch(`${base}/api/agents?limit=100`)).json()) as { data: Array<{ id: string; name: string }> }
  return page.data.filter((a) => a.name === name).map((a) => a.id)
}

/** Moves every claim's creation back by `ms`, as if that much time had passed. */
async function ageClaims(url: string, ms: number): Promise<void> {
  const { db, close } = connect(url)
  try {
    const rows = await db.selectFrom('idempotency_requests').select(['key', 'created_at']).execute()
    for (const row of rows) {
      const earlier = new Date(Date.parse(row.created_at) - ms).toISOString()
      await db.updateTable('idempotency_requests').set({ created_at: earlier }).where('key', '=', row.key).execute()
    }
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
        const [, signal] = await once(crashing.child, 'exit')
        assert.equal(signal, 'SIGKILL')

        const server = startServer({ DATABASE_URL: database.url })
        try {
          const base = await server.url
          assert.deepEqual(await agentsNamed(base, 'Crash'), [], 'the rolled-back insert is not visible')
          // The dead request's claim counts as in flight until it is older than the request time-out.
          const early = await post(base, 'Crash', 'crash-inside')
          assert.equal(early.status, 409)
          assert.equal(early.headers.get('retry-after'), '1')
          await ageClaims(database.url, 100_000)
          assert.equal((await post(base, 'Crash', 'crash-inside')).status, 409, 'not yet older than the 120 s time-out')
          await ageClaims(database.url, 21_000)
          const retry = await post(base, 'Crash', 'crash-inside')
          assert.equal(retry.status, 201)
          const created = await retry.text()
          const replay = await post(base, 'Crash', 'crash-inside')
          assert.equal(replay.status, 201)
          assert.equal(replay.headers.get('idempotent-replayed'), 'true')
          assert.equal(await replay.text(), created)
          assert.deepEqual(await agentsNamed(base, 'Crash'), [JSON.parse(created).id])
        } finally {
          server.child.kill('SIGTERM')
          await once(server.child, 'exit')
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
        await once(crashing.child, 'exit')

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
          server.child.kill('SIGTERM')
          await once(server.child, 'exit')
        }
      } finally {
        await database.drop()
      }
    })
  })
}
