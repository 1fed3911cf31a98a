// The secret never leaves the server (every response and every log line at trace level searched for it), and
// the vault's key rules at start-up: TANDEM_SECRET_KEY, secret.key beside a SQLite file, a per-process key for
// sqlite::memory:, PostgreSQL refusing to start without a key, and `credentials rekey` as a real command.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { TEST_SECRET_KEY, dialects, freshDatabase, send, type TestDatabase } from '../helpers.js'
import { buildApp } from '../../src/app.js'
import { ConfigError, loadConfig } from '../../src/config.js'
import { ensureWorkspace } from '../../src/workspaces/store.js'
import { Vault, keyIdOf, openVault } from '../../src/credentials/vault.js'
import { Webhook as Verifier } from 'standardwebhooks'
import { startReceiver } from '../events/receiver.js'
import { TYPESCRIPT_LOADER } from '../../scripts/typescript-loader.mjs'
import { bearer, createKey } from '../auth.js'

const SECRET = 'sk-live-NEVER-SHOWN-8f3a9c2e71'
const SECRET_2 = 'whsec_TWVzc2FnZVNlY3JldFZhbHVlMTIzNDU2'
const tsx = TYPESCRIPT_LOADER

for (const dialect of dialects()) {
  describe(`the secret never leaves the server (${dialect})`, () => {
    let app: FastifyInstance
    let database: TestDatabase
    const logLines: string[] = []
    before(async () => {
      database = await freshDatabase(dialect)
      const config = loadConfig({ LOG_LEVEL: 'trace', TANDEM_AUTH: 'required', TANDEM_SECRET_KEY: TEST_SECRET_KEY, TANDEM_WORKERS: '0', DATABASE_URL: database.url })
      app = await buildApp(config, { connect: { schema: database.schema, poolSize: 4 }, logStream: { write: (line: string) => void logLines.push(line) } })
      await app.ready()
    })
    after(async () => {
      await app.close()
      await database.drop()
    })

    it('no response, header or log line contains it, whatever the request', async () => {
      const db = app.database.db
      const workspaceId = await ensureWorkspace(db, 'default')
      const admin = (await createKey(app, { workspaceId, name: 'admin', role: 'admin' })).headers
      const member = (await createKey(app, { workspaceId, name: 'member' })).headers
      const foreign = (await createKey(app, { workspace: 'elsewhere', name: 'f', role: 'admin' })).headers
      const responses: LightMyRequestResponse[] = []
      const call = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown, headers: Record<string, string> = admin) => {
        const res = await send(app, method, url, body, headers)
        responses.push(res)
        return res
      }
      const raw = async (method: 'POST' | 'PATCH', url: string, payload: string, contentType: string) => {
        const res = await app.inject({ method, url, payload, headers: { ...admin, 'content-type': contentType } })
        responses.push(res)
        return res
      }

      const created = await call('POST', '/api/credentials', { name: 'Vendor', secret: SECRET }, { ...admin, 'idempotency-key': 'leak-1' })
      assert.equal(created.statusCode, 201)
      const id = created.json().id
      assert.equal((await call('POST', '/api/credentials', { name: 'Vendor', secret: SECRET }, { ...admin, 'idempotency-key': 'leak-1' })).headers['idempotent-replayed'], 'true')
      assert.equal((await call('POST', '/api/credentials', { name: 'Vendor', secret: SECRET_2 }, { ...admin, 'idempotency-key': 'leak-1' })).statusCode, 422)
      await call('GET', `/api/credentials/${id}`)
      await call('GET', '/api/credentials')
      await call('PATCH', `/api/credentials/${id}`, { secret: SECRET_2 })
      await call('PATCH', `/api/credentials/${id}`, { name: 'Renamed' })
      // Refusals of every kind, each carrying the secret in its body.
      await call('POST', '/api/credentials', { name: 'x', secret: SECRET, extra: SECRET })
      await call('POST', '/api/credentials', { name: SECRET.repeat(10), secret: SECRET })
      await call('POST', '/api/credentials', { name: 'x', secret: SECRET.repeat(300) })
      await call('POST', '/api/credentials', { name: 'x', secret: [SECRET] })
      await call('POST', '/api/credentials', { name: 'x', secret: `${SECRET}\u0000` })
      await call('PATCH', `/api/credentials/${id}`, { secret: SECRET, extra: 1 })
      await raw('POST', '/api/credentials', `{"name":"x","secret":"${SECRET}"`, 'application/json')
      await raw('POST', '/api/credentials', `{"name":"x","secret":"${SECRET}","secret":"${SECRET_2}"}`, 'application/json')
      await raw('POST', '/api/credentials', `secret=${SECRET}`, 'application/x-www-form-urlencoded')
      await raw('PATCH', `/api/credentials/${id}`, SECRET, 'text/plain')
      await call('POST', '/api/credentials', { name: 'x', secret: SECRET }, member)
      await call('PATCH', `/api/credentials/${id}`, { secret: SECRET }, member)
      await call('PATCH', `/api/credentials/${id}`, { secret: SECRET }, foreign)
      await call('POST', '/api/credentials', { name: 'x', secret: SECRET }, bearer(SECRET))
      await call('DELETE', `/api/credentials/${id}`)

      assert.ok(responses.length >= 20)
      assert.ok(responses.some((r) => r.statusCode === 400) && responses.some((r) => r.statusCode === 403) && responses.some((r) => r.statusCode === 415))
      for (const res of responses) {
        const seen = JSON.stringify(res.headers) + res.body
        for (const secret of [SECRET, SECRET_2]) assert.ok(!seen.includes(secret), `${res.statusCode} ${res.body.slice(0, 200)}`)
      }
      // Should a body ever be logged, its secret is redacted.
      app.log.warn({ body: { name: 'logged', secret: SECRET }, req: { body: { secret: SECRET } }, secret: SECRET }, 'a body in a log line')
      assert.match(logLines.at(-1) as string, /a body in a log line/)
      assert.ok(logLines.length >= responses.length, `request lines were logged (${logLines.length})`)
      for (const secret of [SECRET, SECRET_2]) assert.deepEqual(logLines.filter((line) => line.includes(secret)), [], 'a log line holds the secret')
      const stored = JSON.stringify(await db.selectFrom('idempotency_requests').selectAll().execute()) + JSON.stringify(await db.selectFrom('credentials').selectAll().execute())
      assert.ok(!stored.includes(SECRET) && !stored.includes(SECRET_2), 'nothing stored in clear')
    })
  })
}

describe('vault keys at start-up', () => {
  it('TANDEM_SECRET_KEY and TANDEM_SECRET_KEY_PREVIOUS: 32 bytes in base64, else one line naming the variable (never the value)', () => {
    const key = randomBytes(32)
    assert.deepEqual(loadConfig({ TANDEM_SECRET_KEY: key.toString('base64') }).secretKey, key)
    assert.deepEqual(loadConfig({ TANDEM_SECRET_KEY: key.toString('base64url') }).secretKey, key)
    assert.deepEqual(loadConfig({ TANDEM_SECRET_KEY_PREVIOUS: `${key.toString('base64')},${key.toString('base64')}` }).secretKeysPrevious, [key, key])
    for (const [variable, value] of [
      ['TANDEM_SECRET_KEY', randomBytes(31).toString('base64')],
      ['TANDEM_SECRET_KEY', randomBytes(33).toString('base64')],
      ['TANDEM_SECRET_KEY', 'correct horse battery staple, but not base64!'],
      ['TANDEM_SECRET_KEY_PREVIOUS', `${key.toString('base64')},short-key-abc`],
    ] as const) {
      assert.throws(() => loadConfig({ [variable]: value }), (error: unknown) => {
        assert.ok(error instanceof ConfigError)
        assert.ok(error.message.startsWith(`${variable}: must be 32 random bytes in base64`), error.message)
        assert.ok(!error.message.includes(value.split(',').pop() as string), 'the value is not quoted')
        assert.doesNotMatch(error.message, /\n/)
        return true
      })
    }
  })

  it('PostgreSQL without TANDEM_SECRET_KEY refuses to start, naming the variable', () => {
    assert.throws(() => loadConfig({ DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test' }), /^ConfigError: TANDEM_SECRET_KEY: is required with PostgreSQL/)
    const result = spawnSync(process.execPath, [...tsx, 'src/main.ts'], {
      env: { ...process.env, PORT: '0', DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test', TANDEM_SECRET_KEY: '' },
      encoding: 'utf8',
    })
    assert.equal(result.status, 1)
    assert.equal(result.stderr.trim().split('\n').length, 1)
    assert.match(result.stderr, /^tandem: invalid configuration: TANDEM_SECRET_KEY: is required with PostgreSQL/)
  })

  it('SQLite without a key: the first start writes secret.key (0600) beside the database, later starts read it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tandem-vault-'))
    try {
      const config = loadConfig({ LOG_LEVEL: 'silent', DATABASE_URL: `sqlite:${join(dir, 'data', 'tandem.db')}` })
      const first = await buildApp(config)
      const file = join(dir, 'data', 'secret.key')
      assert.equal(statSync(file).mode & 0o777, 0o600)
      assert.equal(Buffer.from(readFileSync(file, 'utf8').trim(), 'base64').length, 32)
      const id = (await send(first, 'POST', '/api/credentials', { name: 'kept', secret: SECRET })).json().id
      const keyId = first.vault.keyId
      await first.close()
      const second = await buildApp(config)
      try {
        assert.equal(second.vault.keyId, keyId)
        assert.equal(keyIdOf(Buffer.from(readFileSync(file, 'utf8').trim(), 'base64')), keyId)
        const row = await second.database.db.selectFrom('credentials').select(['key_id', 'ciphertext']).where('id', '=', id).executeTakeFirstOrThrow()
        assert.equal(second.vault.open({ keyId: row.key_id, ciphertext: row.ciphertext }, id), SECRET)
      } finally {
        await second.close()
      }
      writeFileSync(file, 'not a key\n')
      assert.throws(() => openVault(config), (error: unknown) => error instanceof ConfigError && /secret\.key does not hold a key/.test(error.message))
      const started = spawnSync(process.execPath, [...tsx, 'src/main.ts'], { env: { ...process.env, PORT: '0', DATABASE_URL: config.databaseUrl, TANDEM_SECRET_KEY: '' }, encoding: 'utf8' })
      assert.equal(started.status, 1)
      assert.match(started.stderr, /^tandem: invalid configuration: TANDEM_SECRET_KEY: is not set and .*secret\.key does not hold a key/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('sqlite::memory: uses one key for the life of the process', () => {
    const config = loadConfig({ DATABASE_URL: 'sqlite::memory:' })
    assert.equal(openVault(config).keyId, openVault(config).keyId)
    assert.notEqual(openVault(config).keyId, openVault(loadConfig({ DATABASE_URL: 'sqlite::memory:', TANDEM_SECRET_KEY: TEST_SECRET_KEY })).keyId)
  })

  it('npm run cli -- credentials rekey re-encrypts credentials and webhook secrets with the current key; without the old key it stops and says which', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tandem-rekey-'))
    const oldKey = randomBytes(32).toString('base64')
    const newKey = randomBytes(32).toString('base64')
    const newKeyId = keyIdOf(Buffer.from(newKey, 'base64'))
    const databaseUrl = `sqlite:${join(dir, 'tandem.db')}`
    const receiver = await startReceiver()
    try {
      const app = await buildApp(loadConfig({ LOG_LEVEL: 'silent', DATABASE_URL: databaseUrl, TANDEM_SECRET_KEY: oldKey }))
      const ids = [(await send(app, 'POST', '/api/credentials', { name: 'a', secret: SECRET })).json().id, (await send(app, 'POST', '/api/credentials', { name: 'b', secret: SECRET_2 })).json().id]
      const hook = (await send(app, 'POST', '/api/webhooks', { url: receiver.url, events: ['message.created'] })).json()
      await app.close()
      const cli = (env: Record<string, string>) =>
        spawnSync(process.execPath, [...tsx, 'src/cli.ts', 'credentials', 'rekey'], { env: { ...process.env, DATABASE_URL: databaseUrl, TANDEM_SECRET_KEY_PREVIOUS: '', ...env }, encoding: 'utf8' })

      const stranger = randomBytes(32).toString('base64')
      const refused = cli({ TANDEM_SECRET_KEY: stranger })
      assert.equal(refused.status, 2)
      assert.match(refused.stderr, new RegExp(`key ${keyIdOf(Buffer.from(oldKey, 'base64'))}, which this instance does not have`))
      assert.ok(!refused.stderr.includes(SECRET) && !refused.stdout.includes(SECRET))

      const done = cli({ TANDEM_SECRET_KEY: newKey, TANDEM_SECRET_KEY_PREVIOUS: oldKey })
      assert.equal(done.status, 0, done.stderr)
      assert.equal(done.stdout.trim(), `re-encrypted 2 credentials with key ${newKeyId}\nre-encrypted 1 webhook secret with key ${newKeyId}\nre-encrypted 0 inbound hook secrets with key ${newKeyId}\nre-encrypted 0 A2A push tokens with key ${newKeyId}\nre-encrypted 0 A2A push credentials with key ${newKeyId}`)
      assert.equal(cli({ TANDEM_SECRET_KEY: newKey, TANDEM_SECRET_KEY_PREVIOUS: oldKey }).stdout.trim(), `re-encrypted 0 credentials with key ${newKeyId}\nre-encrypted 0 webhook secrets with key ${newKeyId}\nre-encrypted 0 inbound hook secrets with key ${newKeyId}\nre-encrypted 0 A2A push tokens with key ${newKeyId}\nre-encrypted 0 A2A push credentials with key ${newKeyId}`)

      // The previous key dropped: the credentials open, and webhook deliveries are signed with the same secret.
      const reopened = await buildApp(loadConfig({ LOG_LEVEL: 'silent', DATABASE_URL: databaseUrl, TANDEM_SECRET_KEY: newKey, TANDEM_EGRESS_ALLOW: '127.0.0.0/8' }))
      try {
        const onlyNew = new Vault(Buffer.from(newKey, 'base64'))
        const rows = await reopened.database.db.selectFrom('credentials').select(['id', 'key_id', 'ciphertext']).orderBy('id').execute()
        assert.deepEqual(rows.map((r) => onlyNew.open({ keyId: r.key_id, ciphertext: r.ciphertext }, r.id)), [SECRET, SECRET_2])
        assert.deepEqual(rows.map((r) => r.id), ids)
        await reopened.ready()
        const stream = (await send(reopened, 'POST', '/api/streams', { name: 'after the rekey' })).json()
        const text = { blocks: [{ type: 'rich_text', elements: [{ type: 'paragraph', children: [{ type: 'text', text: 'signed' }] }] }] }
        assert.equal((await send(reopened, 'POST', `/api/chat/streams/${stream.id}/messages`, { content: text })).statusCode, 201)
        const [delivered] = await receiver.waitFor(1)
        assert.equal((new Verifier(hook.secret).verify(delivered?.body as string, delivered?.headers as Record<string, string>) as { type: string }).type, 'message.created')
      } finally {
        await reopened.close()
      }
    } finally {
      await receiver.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
