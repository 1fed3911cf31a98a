// No secret at rest outside the vault: after creates with Idempotency-Keys (a webhook, whose
// answer shows its secret once; a credential, whose body holds one) and their replays, the bytes of the
// database — the SQLite file and its -wal, or every row of every table of the PostgreSQL database — hold
// neither secret in plain text (nor in base64). The vault's ciphertexts are all there is.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { sql } from 'kysely'
import { loadConfig } from '../../src/config.js'
import { buildApp } from '../../src/app.js'
import { TEST_SECRET_KEY, dialects, freshDatabase, send } from '../helpers.js'

for (const dialect of dialects()) {
  describe(`secrets at rest (${dialect})`, () => {
    it('idempotent creates leave no secret outside the vault', { timeout: 60000 }, async () => {
      const database = await freshDatabase(dialect, { ownDatabase: true })
      const app = await buildApp(loadConfig({ LOG_LEVEL: 'silent', TANDEM_WORKERS: '0', TANDEM_SECRET_KEY: TEST_SECRET_KEY, DATABASE_URL: database.url }), { connect: { poolSize: 2 } })
      try {
        await app.ready()
        const hook = await send(app, 'POST', '/api/webhooks', { url: 'https://hooks.example.com/in', events: ['*'] }, { 'idempotency-key': 'hook-at-rest' })
        assert.equal(hook.statusCode, 201, hook.body)
        const webhookSecret = hook.json().secret as string
        assert.match(webhookSecret, /^whsec_/)
        const replay = await send(app, 'POST', '/api/webhooks', { url: 'https://hooks.example.com/in', events: ['*'] }, { 'idempotency-key': 'hook-at-rest' })
        assert.equal(replay.headers['idempotent-replayed'], 'true')
        assert.equal(replay.json().secret, undefined)
        const rotated = await send(app, 'POST', `/api/webhooks/${hook.json().id}/rotate-secret`)
        const rotatedSecret = rotated.json().secret as string

        const credentialSecret = `sk-known-${'q'.repeat(24)}-plaintext`
        const credential = await send(app, 'POST', '/api/credentials', { name: 'at rest', secret: credentialSecret }, { 'idempotency-key': 'cred-at-rest' })
        assert.equal(credential.statusCode, 201, credential.body)
        assert.equal((await send(app, 'POST', '/api/credentials', { name: 'at rest', secret: credentialSecret }, { 'idempotency-key': 'cred-at-rest' })).headers['idempotent-replayed'], 'true')

        const secrets = [webhookSecret, webhookSecret.slice('whsec_'.length), rotatedSecret, credentialSecret]
        let stored: string
        if (dialect === 'sqlite') {
          await app.close()
          const file = database.url.slice('sqlite:'.length)
          stored = ['', '-wal'].map((suffix) => (existsSync(file + suffix) ? readFileSync(file + suffix).toString('latin1') : '')).join('\n')
          assert.ok(stored.includes('hooks.example.com'), 'the search reads the stored data')
        } else {
          const { db } = app.database
          const tables = await sql<{ schema: string; name: string }>`select table_schema as schema, table_name as name from information_schema.tables
            where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')`.execute(db)
          const dumps: string[] = []
          for (const table of tables.rows) {
            const rows = await sql<{ row: string }>`select t::text as row from ${sql.table(`${table.schema}.${table.name}`)} t`.execute(db)
            dumps.push(...rows.rows.map((r) => r.row))
          }
          stored = dumps.join('\n')
          assert.ok(tables.rows.some((t) => t.name === 'idempotency_requests'))
          assert.ok(stored.includes('hooks.example.com'), 'the search reads the stored data')
        }
        for (const secret of secrets) {
          assert.ok(!stored.includes(secret), `a secret is stored in plain text (${secret.slice(0, 10)}…)`)
          assert.ok(!stored.includes(Buffer.from(secret).toString('base64')), 'a secret is stored in base64')
        }
      } finally {
        await app.close()
        await database.drop()
      }
    })
  })
}
