// `credentials rekey` killed (SIGKILL) in the middle: every credential still opens (with the old key or the
// new one, never half-written), none is lost, and running the command again finishes the job.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import { dialects, freshDatabase } from '../helpers.js'
import { connect } from '../../src/db/connect.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { ensureWorkspace } from '../../src/workspaces/store.js'
import { Vault } from '../../src/credentials/vault.js'
import { newId, now } from '../../src/ids.js'

const COUNT = 4000

for (const dialect of dialects()) {
  describe(`credentials rekey survives SIGKILL (${dialect})`, () => {
    it('leaves every credential readable and finishes when run again', { timeout: 240000 }, async () => {
      const fresh = await freshDatabase(dialect, { ownDatabase: true })
      const database = connect(fresh.url, { poolSize: 2 })
      const oldKey = randomBytes(32)
      const newKey = randomBytes(32)
      const oldVault = new Vault(oldKey)
      const rotated = new Vault(newKey, [oldKey])
      const env = { ...process.env, DATABASE_URL: fresh.url, TANDEM_SECRET_KEY: newKey.toString('base64'), TANDEM_SECRET_KEY_PREVIOUS: oldKey.toString('base64') }
      const rekey = () => spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'credentials', 'rekey'], { env, stdio: ['ignore', 'pipe', 'pipe'] })
      try {
        await migrateToLatest(database)
        const db = database.db
        const workspaceId = await ensureWorkspace(db, 'default')
        const secrets = new Map<string, string>()
        const rows = Array.from({ length: COUNT }, (_, i) => {
          const id = newId()
          const secret = `secret-${i}-${randomBytes(8).toString('hex')}`
          secrets.set(id, secret)
          const sealed = oldVault.seal(secret, id)
          return { id, workspace_id: workspaceId, name: `c${i}`, hint: '…', key_id: sealed.keyId, ciphertext: sealed.ciphertext, created_at: now(), updated_at: now() }
        })
        for (let i = 0; i < rows.length; i += 200) await db.insertInto('credentials').values(rows.slice(i, i + 200)).execute()

        const countNew = async () => Number((await db.selectFrom('credentials').select((eb) => eb.fn.countAll().as('n')).where('key_id', '=', rotated.keyId).executeTakeFirstOrThrow()).n)
        const child = rekey()
        let stderr = ''
        child.stderr.on('data', (chunk) => (stderr += chunk))
        const exited = once(child, 'exit')
        const deadline = Date.now() + 120000
        while ((await countNew()) === 0 && Date.now() < deadline && child.exitCode === null) await sleep(5)
        child.kill('SIGKILL')
        await exited
        const done = await countNew()
        console.log(`rekey (${dialect}): killed after ${done} of ${COUNT} credentials were re-encrypted`)
        assert.ok(done > 0, `the command started re-encrypting: ${stderr}`)
        assert.ok(done < COUNT, 'killed in the middle (raise COUNT if the machine got faster)')

        const check = async () => {
          const stored = await db.selectFrom('credentials').select(['id', 'key_id', 'ciphertext']).execute()
          assert.equal(stored.length, COUNT)
          for (const row of stored) assert.equal(rotated.open({ keyId: row.key_id, ciphertext: row.ciphertext }, row.id), secrets.get(row.id))
          return stored
        }
        await check()

        const again = rekey()
        let out = ''
        again.stdout.on('data', (chunk) => (out += chunk))
        const [code] = await once(again, 'exit')
        assert.equal(code, 0)
        assert.equal(out.trim(), `re-encrypted ${COUNT - done} credentials with key ${rotated.keyId}`)
        const onlyNew = new Vault(newKey)
        for (const row of await check()) assert.equal(onlyNew.open({ keyId: row.key_id, ciphertext: row.ciphertext }, row.id), secrets.get(row.id))
      } finally {
        await database.close()
        await fresh.drop()
      }
    })
  })
}
