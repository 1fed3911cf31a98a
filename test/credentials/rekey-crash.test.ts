// test lane: clock — server processes killed (SIGKILL) and restarted (scripts/test.mjs).
// `credentials rekey` killed (SIGKILL) in the middle — once among the credentials, once among the webhook
// secrets: every secret still opens (with the old key or the new one, never half-written), none is lost, and
// running the command again finishes the job.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import { dialects, freshDatabase } from '../helpers.js'
import { TYPESCRIPT_LOADER } from '../../scripts/typescript-loader.mjs'
import { sql } from 'kysely'
import { connect } from '../../src/db/connect.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { ensureWorkspace } from '../../src/workspaces/store.js'
import { Vault } from '../../src/credentials/vault.js'
import { newId, now } from '../../src/ids.js'

const COUNT = 4000

for (const dialect of dialects()) {
  describe(`credentials rekey survives SIGKILL (${dialect})`, () => {
    it('leaves every credential and webhook secret readable and finishes when run again', { timeout: 240000 }, async () => {
      const fresh = await freshDatabase(dialect, { ownDatabase: true })
      const database = connect(fresh.url, { poolSize: 2 })
      const oldKey = randomBytes(32)
      const newKey = randomBytes(32)
      const oldVault = new Vault(oldKey)
      const rotated = new Vault(newKey, [oldKey])
      const env = { ...process.env, DATABASE_URL: fresh.url, TANDEM_SECRET_KEY: newKey.toString('base64'), TANDEM_SECRET_KEY_PREVIOUS: oldKey.toString('base64') }
      const rekey = () => spawn(process.execPath, [...TYPESCRIPT_LOADER, 'src/cli.ts', 'credentials', 'rekey'], { env, stdio: ['ignore', 'pipe', 'pipe'] })
      try {
        await migrateToLatest(database)
        const db = database.db
        const workspaceId = await ensureWorkspace(db, 'default')
        const secrets = new Map<string, string>()
        const sealed = (i: number) => {
          const id = newId()
          const secret = `secret-${i}-${randomBytes(8).toString('hex')}`
          secrets.set(id, secret)
          return { id, sealed: oldVault.seal(secret, id) }
        }
        const credentials = Array.from({ length: COUNT }, (_, i) => {
          const { id, sealed: { keyId, ciphertext } } = sealed(i)
          return { id, workspace_id: workspaceId, name: `c${i}`, hint: '…', key_id: keyId, ciphertext, created_at: now(), updated_at: now() }
        })
        const webhooks = Array.from({ length: COUNT }, (_, i) => {
          const { id, sealed: { keyId, ciphertext } } = sealed(i)
          return {
            id, workspace_id: workspaceId, url: `https://hooks.example.com/${i}`, events: '["*"]', stream_id: null, description: null, enabled: 1,
            disabled_reason: null, consecutive_failures: 0, secret_key_id: keyId, secret_ciphertext: ciphertext, created_at: now(), updated_at: now(),
          }
        })
        for (let i = 0; i < COUNT; i += 200) {
          await db.insertInto('credentials').values(credentials.slice(i, i + 200)).execute()
          await db.insertInto('webhooks').values(webhooks.slice(i, i + 200)).execute()
        }

        const count = (table: 'credentials' | 'webhooks', column: 'key_id' | 'secret_key_id') => async () =>
          Number((await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)} where ${sql.ref(column)} = ${rotated.keyId}`.execute(db)).rows[0]?.n)
        const newCredentials = count('credentials', 'key_id')
        const newWebhooks = count('webhooks', 'secret_key_id')
        /** Runs the command and kills it once `started` is above zero; how many `started` counts then. */
        const killWhen = async (started: () => Promise<number>) => {
          const child = rekey()
          let stderr = ''
          child.stderr.on('data', (chunk) => (stderr += chunk))
          const exited = once(child, 'exit')
          const deadline = Date.now() + 120000
          while ((await started()) === 0 && Date.now() < deadline && child.exitCode === null) await sleep(5)
          child.kill('SIGKILL')
          await exited
          const done = await started()
          assert.ok(done > 0, `the command started re-encrypting: ${stderr}`)
          assert.ok(done < COUNT, 'killed in the middle (raise COUNT if the machine got faster)')
          return done
        }
        const check = async () => {
          const stored = [
            ...(await db.selectFrom('credentials').select(['id', 'key_id', 'ciphertext']).execute()),
            ...(await db.selectFrom('webhooks').select(['id', 'secret_key_id as key_id', 'secret_ciphertext as ciphertext']).execute()),
          ]
          assert.equal(stored.length, 2 * COUNT)
          for (const row of stored) assert.equal(rotated.open({ keyId: row.key_id, ciphertext: row.ciphertext }, row.id), secrets.get(row.id))
          return stored
        }

        const credentialsDone = await killWhen(newCredentials)
        assert.equal(await newWebhooks(), 0, 'webhook secrets come after the credentials')
        await check()
        const webhooksDone = await killWhen(newWebhooks)
        assert.equal(await newCredentials(), COUNT, 'the second run finished the credentials')
        console.log(`rekey (${dialect}): killed after ${credentialsDone} of ${COUNT} credentials, then after ${webhooksDone} of ${COUNT} webhook secrets`)
        await check()

        const again = rekey()
        let out = ''
        again.stdout.on('data', (chunk) => (out += chunk))
        const [code] = await once(again, 'exit')
        assert.equal(code, 0)
        assert.equal(out.trim(), `re-encrypted 0 credentials with key ${rotated.keyId}\nre-encrypted ${COUNT - webhooksDone} webhook secrets with key ${rotated.keyId}\nre-encrypted 0 inbound hook secrets with key ${rotated.keyId}\nre-encrypted 0 A2A push tokens with key ${rotated.keyId}\nre-encrypted 0 A2A push credentials with key ${rotated.keyId}`)
        const onlyNew = new Vault(newKey)
        for (const row of await check()) assert.equal(onlyNew.open({ keyId: row.key_id, ciphertext: row.ciphertext }, row.id), secrets.get(row.id))
      } finally {
        await database.close()
        await fresh.drop()
      }
    })
  })
}
