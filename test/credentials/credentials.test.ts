// Credentials: the API (admin-only writes, members read names and hints, 404 across workspaces, bounds on
// both sides), encryption at rest, readSecret, key rotation and rekey, and that the secret never leaves.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { build, dialects, pointers, send } from '../helpers.js'
import { ensureWorkspace } from '../../src/workspaces/store.js'
import { hintOf, readSecret } from '../../src/credentials/store.js'
import { CREDENTIAL_SECRETS, WEBHOOK_SECRETS, replaceSealed, reseal } from '../../src/credentials/rekey.js'
import { Vault, VaultError, keyIdOf } from '../../src/credentials/vault.js'
import { createKey } from '../auth.js'

const SECRET = 'sk-test-Zq9vTANDEMsecret-4711'
const key64 = () => randomBytes(32).toString('base64')

describe('hints', () => {
  it('"…" and the last 4 characters, or "…" alone under 12 characters', () => {
    assert.equal(hintOf('a'), '…')
    assert.equal(hintOf('abcdefghijk'), '…')
    assert.equal(hintOf('abcdefghijkl'), '…ijkl')
    assert.equal(hintOf('😀😀😀😀😀😀😀😀😀😀😀'), '…', '11 code points')
    assert.equal(hintOf('abcdefgh😀😀😀😀'), '…😀😀😀😀')
  })
})

for (const dialect of dialects()) {
  describe(`credentials API (${dialect})`, () => {
    let app: FastifyInstance
    let workspaceId: string
    let admin: Record<string, string>
    let member: Record<string, string>
    let agentKey: Record<string, string>
    let foreignAdmin: Record<string, string>
    before(async () => {
      app = await build(dialect, { TANDEM_AUTH: 'required' })
      const db = app.database.db
      workspaceId = await ensureWorkspace(db, 'default')
      admin = (await createKey(app, { workspaceId, name: 'admin', role: 'admin' })).headers
      member = (await createKey(app, { workspaceId, name: 'member' })).headers
      const agent = (await send(app, 'POST', '/api/agents', { name: 'Bot', providerType: 'custom_token_only' }, admin)).json()
      agentKey = (await createKey(app, { workspaceId, name: 'bot', agentId: agent.id })).headers
      foreignAdmin = (await createKey(app, { workspace: 'foreign', name: 'f', role: 'admin' })).headers
    })
    after(() => app.close())

    const rows = () => app.database.db.selectFrom('credentials').selectAll().orderBy('id').execute()

    it('creates, reads, lists, renames, replaces the secret and deletes', async () => {
      const created = await send(app, 'POST', '/api/credentials', { name: 'Anthropic', secret: SECRET }, admin)
      assert.equal(created.statusCode, 201)
      const credential = created.json()
      assert.deepEqual(Object.keys(credential).sort(), ['createdAt', 'hint', 'id', 'name', 'updatedAt'])
      assert.equal(created.headers.location, `/api/credentials/${credential.id}`)
      assert.equal(credential.hint, '…4711')
      assert.equal(credential.createdAt, credential.updatedAt)
      assert.deepEqual((await send(app, 'GET', `/api/credentials/${credential.id.toUpperCase()}`, undefined, member)).json(), credential)
      const list = (await send(app, 'GET', '/api/credentials', undefined, member)).json()
      assert.deepEqual(list.data.filter((c: { id: string }) => c.id === credential.id), [credential])
      assert.equal(await readSecret(app.database.db, workspaceId, credential.id), SECRET)

      const renamed = (await send(app, 'PATCH', `/api/credentials/${credential.id}`, { name: 'Claude' }, admin)).json()
      assert.equal(renamed.name, 'Claude')
      assert.equal(renamed.hint, '…4711')
      assert.equal(await readSecret(app.database.db, workspaceId, credential.id), SECRET)
      const replaced = await send(app, 'PATCH', `/api/credentials/${credential.id}`, { secret: 'short' }, admin)
      assert.equal(replaced.statusCode, 200)
      assert.equal(replaced.json().hint, '…')
      assert.equal(replaced.json().name, 'Claude')
      assert.ok(replaced.json().updatedAt >= credential.updatedAt)
      assert.equal(await readSecret(app.database.db, workspaceId, credential.id), 'short')

      assert.equal((await send(app, 'DELETE', `/api/credentials/${credential.id}`, undefined, admin)).statusCode, 204)
      assert.equal((await send(app, 'GET', `/api/credentials/${credential.id}`, undefined, admin)).statusCode, 404)
      assert.equal((await send(app, 'DELETE', `/api/credentials/${credential.id}`, undefined, admin)).statusCode, 404)
      assert.equal(await readSecret(app.database.db, workspaceId, credential.id), null)
    })

    it('pages the list, oldest first', async () => {
      const ids: string[] = []
      for (let i = 0; i < 3; i++) ids.push((await send(app, 'POST', '/api/credentials', { name: `page ${i}`, secret: `secret-${i}` }, admin)).json().id)
      const first = (await send(app, 'GET', '/api/credentials?limit=2', undefined, admin)).json()
      const second = (await send(app, 'GET', `/api/credentials?limit=100&cursor=${first.nextCursor}`, undefined, admin)).json()
      const all = [...first.data, ...second.data].map((c: { id: string }) => c.id)
      assert.deepEqual(all, [...all].sort())
      for (const id of ids) assert.ok(all.includes(id))
      assert.equal(second.nextCursor, null)
    })

    it('enforces name 1–120 and secret 1–8192 characters on both sides, and changes nothing when refusing', async () => {
      const before = JSON.stringify(await rows())
      const edge = await send(app, 'POST', '/api/credentials', { name: '😀'.repeat(120), secret: '😀'.repeat(8192) }, admin)
      assert.equal(edge.statusCode, 201)
      assert.equal((await send(app, 'POST', '/api/credentials', { name: 'n', secret: 's' }, admin)).statusCode, 201)
      const id = edge.json().id
      const after = JSON.stringify(await rows())
      const bad: Array<[unknown, string[]]> = [
        [{ name: '', secret: 's' }, ['/name']],
        [{ name: 'x'.repeat(121), secret: 's' }, ['/name']],
        [{ name: 'n', secret: '' }, ['/secret']],
        [{ name: 'n', secret: 'x'.repeat(8193) }, ['/secret']],
        [{ name: '', secret: 'x'.repeat(8193) }, ['/name', '/secret']],
        [{ secret: 's' }, ['/name']],
        [{ name: 'n' }, ['/secret']],
        [{ name: 'n', secret: 's', hint: 'x' }, ['/hint']],
        [{ name: 1, secret: true }, ['/name', '/secret']],
        [{ name: 'a\u0000b', secret: 's' }, ['/name']],
      ]
      for (const [body, expected] of bad) {
        const res = await send(app, 'POST', '/api/credentials', body, admin)
        assert.equal(res.statusCode, 400, JSON.stringify(body).slice(0, 80))
        assert.deepEqual(pointers(res), expected, JSON.stringify(body).slice(0, 80))
      }
      const badPatches: Array<[unknown, string[]]> = [
        [{}, ['']],
        [{ name: '' }, ['/name']],
        [{ name: 'x'.repeat(121) }, ['/name']],
        [{ secret: '' }, ['/secret']],
        [{ secret: 'x'.repeat(8193) }, ['/secret']],
        [{ name: null }, ['/name']],
        [{ id: id }, ['/id']],
      ]
      for (const [body, expected] of badPatches) {
        const res = await send(app, 'PATCH', `/api/credentials/${id}`, body, admin)
        assert.equal(res.statusCode, 400, JSON.stringify(body).slice(0, 80))
        assert.deepEqual(pointers(res), expected, JSON.stringify(body).slice(0, 80))
      }
      assert.equal((await send(app, 'GET', '/api/credentials/not-a-uuid', undefined, admin)).statusCode, 400)
      assert.equal(JSON.stringify(await rows()), after)
      assert.notEqual(before, after)
      assert.equal(await readSecret(app.database.db, workspaceId, id), '😀'.repeat(8192))
    })

    it('writes are admin-only: members and agent keys get 403 and change nothing; members read', async () => {
      const credential = (await send(app, 'POST', '/api/credentials', { name: 'Guarded', secret: SECRET }, admin)).json()
      const before = JSON.stringify(await rows())
      for (const [who, headers] of [['member', member], ['agent key', agentKey]] as const) {
        const attempts = [
          await send(app, 'POST', '/api/credentials', { name: 'Mine', secret: 'x' }, headers),
          await send(app, 'POST', '/api/credentials', { name: '' }, headers),
          await send(app, 'PATCH', `/api/credentials/${credential.id}`, { secret: 'attacker' }, headers),
          await send(app, 'DELETE', `/api/credentials/${credential.id}`, undefined, headers),
        ]
        for (const res of attempts) {
          assert.equal(res.statusCode, 403, `${who}: ${res.body}`)
          assert.equal(res.json().type, 'urn:tandem:problem:forbidden')
        }
      }
      assert.equal((await send(app, 'GET', `/api/credentials/${credential.id}`, undefined, agentKey)).statusCode, 403)
      assert.equal((await send(app, 'GET', '/api/credentials', undefined, agentKey)).statusCode, 403)
      assert.equal((await send(app, 'GET', `/api/credentials/${credential.id}`, undefined, member)).json().hint, '…4711')
      assert.equal(JSON.stringify(await rows()), before)
    })

    it("hides another workspace's credentials behind 404", async () => {
      const credential = (await send(app, 'POST', '/api/credentials', { name: 'Home', secret: SECRET }, admin)).json()
      const before = JSON.stringify(await rows())
      assert.equal((await send(app, 'GET', `/api/credentials/${credential.id}`, undefined, foreignAdmin)).statusCode, 404)
      assert.equal((await send(app, 'PATCH', `/api/credentials/${credential.id}`, { name: 'stolen' }, foreignAdmin)).statusCode, 404)
      assert.equal((await send(app, 'DELETE', `/api/credentials/${credential.id}`, undefined, foreignAdmin)).statusCode, 404)
      const theirs = (await send(app, 'GET', '/api/credentials', undefined, foreignAdmin)).json()
      assert.deepEqual(theirs.data, [])
      assert.equal(await readSecret(app.database.db, await ensureWorkspace(app.database.db, 'foreign'), credential.id), null)
      assert.equal(JSON.stringify(await rows()), before)
    })

    it('stores only AES-256-GCM ciphertext bound to the credential id, with the key id', async () => {
      const a = (await send(app, 'POST', '/api/credentials', { name: 'A', secret: SECRET }, admin)).json()
      const b = (await send(app, 'POST', '/api/credentials', { name: 'B', secret: 'another-secret-value' }, admin)).json()
      const stored = await rows()
      const dump = JSON.stringify(stored)
      assert.ok(!dump.includes(SECRET) && !dump.includes(Buffer.from(SECRET).toString('base64')), 'no plaintext at rest')
      const rowA = stored.find((r) => r.id === a.id)
      assert.equal(rowA?.key_id, app.vault.keyId)
      assert.equal(rowA?.key_id, keyIdOf(Buffer.from(process.env.TANDEM_SECRET_KEY as string, 'base64')))
      // A ciphertext moved to another row does not open (the id is the additional authenticated data).
      await app.database.db.updateTable('credentials').set({ ciphertext: rowA?.ciphertext as string }).where('id', '=', b.id).execute()
      await assert.rejects(readSecret(app.database.db, workspaceId, b.id), VaultError)
      const tampered = Buffer.from(rowA?.ciphertext as string, 'base64')
      tampered[tampered.length - 1] = (tampered[tampered.length - 1] as number) ^ 1
      await app.database.db.updateTable('credentials').set({ ciphertext: tampered.toString('base64') }).where('id', '=', a.id).execute()
      const error = await readSecret(app.database.db, workspaceId, a.id).catch((e: unknown) => e)
      assert.ok(error instanceof VaultError)
      assert.doesNotMatch(error.message, /Zq9v/)
    })
  })

  describe(`key rotation and rekey (${dialect})`, () => {
    const oldKey = key64()
    const newKey = key64()
    let app: FastifyInstance
    before(async () => {
      app = await build(dialect, { TANDEM_SECRET_KEY: oldKey })
    })
    after(() => app.close())

    it('the previous key still decrypts; rekey re-encrypts everything with the current key, once', async () => {
      const db = app.database.db
      const workspaceId = await ensureWorkspace(db, 'default')
      const secrets = ['first-secret-value', 'second-secret-value', '😀 third']
      const ids: string[] = []
      for (const secret of secrets) ids.push((await send(app, 'POST', '/api/credentials', { name: 'rotating', secret })).json().id)
      const sealedOld = await db.selectFrom('credentials').select(['id', 'key_id', 'ciphertext']).orderBy('id').execute()
      assert.ok(sealedOld.every((r) => r.key_id === keyIdOf(Buffer.from(oldKey, 'base64'))))

      const rotated = new Vault(Buffer.from(newKey, 'base64'), [Buffer.from(oldKey, 'base64')])
      const onlyNew = new Vault(Buffer.from(newKey, 'base64'))
      for (const row of sealedOld) {
        const sealed = { keyId: row.key_id, ciphertext: row.ciphertext }
        assert.equal(rotated.open(sealed, row.id), secrets[ids.indexOf(row.id)], 'TANDEM_SECRET_KEY_PREVIOUS decrypts')
        assert.throws(() => onlyNew.open(sealed, row.id), VaultError)
      }
      assert.equal(await reseal(db, rotated, CREDENTIAL_SECRETS, 2), 3)
      const sealedNew = await db.selectFrom('credentials').select(['id', 'key_id', 'ciphertext']).orderBy('id').execute()
      for (const row of sealedNew) {
        assert.equal(row.key_id, onlyNew.keyId)
        assert.equal(onlyNew.open({ keyId: row.key_id, ciphertext: row.ciphertext }, row.id), secrets[ids.indexOf(row.id)], 'the new key alone opens it')
      }
      assert.equal(await reseal(db, rotated, CREDENTIAL_SECRETS), 0, 'nothing left to re-encrypt')
      for (const [i, id] of ids.entries()) assert.equal(await readSecret(db, workspaceId, id), secrets[i])
    })

    it('rekey re-seals the webhook signing secrets too, in batches', async () => {
      const db = app.database.db
      const hooks: Array<{ id: string; secret: string }> = []
      for (let i = 0; i < 5; i++) hooks.push((await send(app, 'POST', '/api/webhooks', { url: `https://hooks.example.com/${i}`, events: ['*'] })).json())
      const stored = () => db.selectFrom('webhooks').select(['id', 'secret_key_id', 'secret_ciphertext']).orderBy('id').execute()
      assert.ok((await stored()).every((r) => r.secret_key_id === keyIdOf(Buffer.from(oldKey, 'base64'))))
      const rotated = new Vault(Buffer.from(newKey, 'base64'), [Buffer.from(oldKey, 'base64')])
      const onlyNew = new Vault(Buffer.from(newKey, 'base64'))
      assert.equal(await reseal(db, rotated, WEBHOOK_SECRETS, 2), 5)
      for (const row of await stored()) {
        assert.equal(row.secret_key_id, onlyNew.keyId)
        assert.equal(onlyNew.open({ keyId: row.secret_key_id, ciphertext: row.secret_ciphertext }, row.id), hooks.find((h) => h.id === row.id)?.secret)
      }
      assert.equal(await reseal(db, rotated, WEBHOOK_SECRETS), 0, 'nothing left to re-seal')
    })

    it('rekey never overwrites a secret changed after it was read (a rotation by a server still on the old key)', async () => {
      const db = app.database.db
      const hook = (await send(app, 'POST', '/api/webhooks', { url: 'https://hooks.example.com/race', events: ['*'] })).json()
      const read = await db.selectFrom('webhooks').select(['secret_key_id', 'secret_ciphertext']).where('id', '=', hook.id).executeTakeFirstOrThrow()
      const sealedRead = { keyId: read.secret_key_id, ciphertext: read.secret_ciphertext }
      const rotatedMeanwhile = (await send(app, 'POST', `/api/webhooks/${hook.id}/rotate-secret`)).json().secret
      const rotated = new Vault(Buffer.from(newKey, 'base64'), [Buffer.from(oldKey, 'base64')])
      const stale = rotated.seal(rotated.open(sealedRead, hook.id), hook.id)
      assert.equal(await replaceSealed(db, WEBHOOK_SECRETS, hook.id, sealedRead, stale), false)
      const now = await db.selectFrom('webhooks').select(['secret_key_id', 'secret_ciphertext']).where('id', '=', hook.id).executeTakeFirstOrThrow()
      assert.equal(rotated.open({ keyId: now.secret_key_id, ciphertext: now.secret_ciphertext }, hook.id), rotatedMeanwhile)
      assert.equal(await replaceSealed(db, WEBHOOK_SECRETS, hook.id, { keyId: now.secret_key_id, ciphertext: now.secret_ciphertext }, stale), true)
    })
  })
}
