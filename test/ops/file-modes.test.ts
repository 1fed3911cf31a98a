// Files only their owner reads: a data folder Tandem creates is 0700, a database it creates 0600 with
// its -wal and -shm files, and a secret.key that group or others can read stops start-up with one line naming the
// file and the chmod that fixes it. SQLite only: PostgreSQL keeps no files of ours.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildApp } from '../../src/app.js'
import { ConfigError, loadConfig } from '../../src/config.js'
import { openVault } from '../../src/credentials/vault.js'
import { startServer } from '../child-server.js'

const modeOf = (path: string) => statSync(path).mode & 0o777

describe('file modes (sqlite)', { skip: process.platform === 'win32' }, () => {
  it('creates the data folder 0700, the database and its -wal/-shm 0600, secret.key 0600', async () => {
    const root = mkdtempSync(join(tmpdir(), 'tandem-modes-'))
    const folder = join(root, 'data')
    const file = join(folder, 'tandem.db')
    const app = await buildApp(loadConfig({ LOG_LEVEL: 'silent', TANDEM_WORKERS: '0', DATABASE_URL: `sqlite:${file}` }))
    try {
      await app.ready()
      const created = await app.inject({ method: 'POST', url: '/api/agents', payload: { name: 'Moded' } })
      assert.equal(created.statusCode, 201)
      assert.equal(modeOf(folder), 0o700, 'data folder')
      for (const path of [file, `${file}-wal`, `${file}-shm`, join(folder, 'secret.key')]) {
        assert.ok(existsSync(path), path)
        assert.equal(modeOf(path), 0o600, path)
      }
    } finally {
      await app.close()
      rmSync(root, { recursive: true, force: true })
    }
  })

  it('refuses a secret.key that group or others can read, naming the file and the chmod', async () => {
    const root = mkdtempSync(join(tmpdir(), 'tandem-modes-'))
    const file = join(root, 'tandem.db')
    const keyFile = join(root, 'secret.key')
    writeFileSync(keyFile, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600 })
    try {
      for (const mode of [0o644, 0o640, 0o604]) {
        chmodSync(keyFile, mode)
        // The vault alone (buildApp would open the database first, and a failed build leaves it open).
        assert.throws(
          () => openVault(loadConfig({ DATABASE_URL: `sqlite:${file}` })),
          (error: Error) => error instanceof ConfigError && error.message.includes(keyFile) && error.message.includes(`chmod 600 ${keyFile}`),
        )
      }
      chmodSync(keyFile, 0o400)
      assert.ok(openVault(loadConfig({ DATABASE_URL: `sqlite:${file}` })))
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  })

  // Bounded: without the refusal the server would start and listen, and the test must fail rather than wait on it.
  it('the process says so in one line and exits 1', { timeout: 60_000 }, async () => {
    const root = mkdtempSync(join(tmpdir(), 'tandem-modes-'))
    mkdirSync(root, { recursive: true })
    const keyFile = join(root, 'secret.key')
    writeFileSync(keyFile, `${randomBytes(32).toString('base64')}\n`, { mode: 0o644 })
    chmodSync(keyFile, 0o644)
    try {
      const server = startServer({ DATABASE_URL: `sqlite:${join(root, 'tandem.db')}`, TANDEM_SECRET_KEY: '' }, { stderr: 'pipe' })
      let stderr = ''
      server.child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
      const outcome = await Promise.race([server.exited, server.url.then((url) => ({ listening: url }))])
      if ('listening' in outcome) await server.stop('SIGKILL')
      assert.ok(!('listening' in outcome), `the server started on ${'listening' in outcome ? outcome.listening : ''} with a secret.key others can read`)
      assert.equal(outcome.code, 1)
      const lines = stderr.trim().split('\n')
      assert.equal(lines.length, 1, stderr)
      assert.match(lines[0] as string, new RegExp(`${keyFile.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}.*chmod 600 `))
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  })
})
