// The real process: `PORT=0` listens and logs its URL, SIGTERM finishes cleanly, bad config exits with
// one line naming the variable, and the CLI prints a working key as its last word.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer } from './child-server.js'
import { TEST_SECRET_KEY } from './helpers.js'
import { TYPESCRIPT_LOADER } from '../scripts/typescript-loader.mjs'
import { bearer } from './auth.js'

const tsx = TYPESCRIPT_LOADER

describe('the server process', () => {
  const file = join(tmpdir(), `tandem-process-${process.pid}.db`)

  it('listens on a free port, serves, and shuts down on SIGTERM with exit code 0', async () => {
    const server = startServer({ DATABASE_URL: `sqlite:${file}`, TANDEM_SECRET_KEY: TEST_SECRET_KEY }, { stderr: 'ignore' })
    try {
      const base = await server.url
      const created = await fetch(`${base}/api/agents`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'live' }) })
      assert.equal(created.status, 201)
      assert.equal((await fetch(`${base}/readyz`)).status, 200)
      assert.equal((await server.stop()).code, 0)
    } finally {
      await server.stop('SIGKILL')
      for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true })
    }
  })

  it('refuses to start on a bad variable, naming it in one line', () => {
    const result = spawnSync(process.execPath, [...tsx, 'src/main.ts'], { env: { ...process.env, PORT: 'eighty' }, encoding: 'utf8' })
    assert.equal(result.status, 1)
    assert.match(result.stderr.trim(), /^tandem: invalid configuration: PORT: must be a whole number/)
  })

  it('creates API keys with the CLI; the key is the last word printed and works once required', async () => {
    const db = join(tmpdir(), `tandem-cli-${process.pid}.db`)
    const env = { ...process.env, DATABASE_URL: `sqlite:${db}` }
    try {
      const result = spawnSync(process.execPath, [...tsx, 'src/cli.ts', 'keys', 'create', '--name', 'ci', '--role', 'admin', '--workspace', 'acme'], { env, encoding: 'utf8' })
      assert.equal(result.status, 0, result.stderr)
      const key = result.stdout.trim().split(/\s+/).pop() as string
      assert.match(key, /^tdm_[A-Za-z0-9_-]{43}$/)
      const server = startServer({ DATABASE_URL: `sqlite:${db}`, TANDEM_AUTH: 'required', TANDEM_SECRET_KEY: TEST_SECRET_KEY }, { stderr: 'ignore' })
      try {
        const base = await server.url
        assert.equal((await fetch(`${base}/api/agents`)).status, 401)
        assert.equal((await fetch(`${base}/api/agents`, { headers: bearer(key) })).status, 200)
      } finally {
        await server.stop()
      }
      const bad = spawnSync(process.execPath, [...tsx, 'src/cli.ts', 'keys', 'create'], { env, encoding: 'utf8' })
      assert.equal(bad.status, 2)
      assert.match(bad.stderr, /--name is required/)
    } finally {
      for (const suffix of ['', '-wal', '-shm']) rmSync(db + suffix, { force: true })
    }
  })

  it('the CLI says what is wrong, in one line and usage, never a stack; exit codes tell success from failure', () => {
    const db = join(tmpdir(), `tandem-cli-usage-${process.pid}.db`)
    const cli = (...args: string[]) => spawnSync(process.execPath, [...tsx, 'src/cli.ts', ...args], { env: { ...process.env, DATABASE_URL: `sqlite:${db}` }, encoding: 'utf8' })
    try {
      for (const help of [['--help'], ['-h'], ['keys', 'create', '--help']]) {
        const run = cli(...help)
        assert.equal(run.status, 0, help.join(' '))
        assert.match(run.stdout, /usage: npm run cli -- /)
      }
      assert.match(cli('--help').stdout, /role: member unless --role admin/, 'the default role is documented')
      const unknownOption = cli('keys', 'create', '--name', 'x', '--colour', 'red')
      assert.equal(unknownOption.status, 2)
      assert.match(unknownOption.stderr, /^tandem: Unknown option '--colour'/)
      assert.doesNotMatch(unknownOption.stderr, /ERR_PARSE_ARGS|\n\s+at /)
      const missingValue = cli('keys', 'create', '--name')
      assert.equal(missingValue.status, 2)
      assert.match(missingValue.stderr, /^tandem: Option '--name <value>' argument missing/)
      assert.doesNotMatch(missingValue.stderr, /ERR_PARSE_ARGS|\n\s+at /)
      const unknownCommand = cli('keys', 'rotate')
      assert.equal(unknownCommand.status, 2)
      assert.match(unknownCommand.stderr, /^tandem: unknown command "keys rotate"/)
      const badRole = cli('keys', 'create', '--name', 'x', '--role', 'owner')
      assert.equal(badRole.status, 2)
      assert.match(badRole.stderr, /--role must be admin or member/)
      const revokeUnknown = cli('keys', 'revoke', '01890a5d-ac96-774b-bcce-b302099a8057')
      assert.equal(revokeUnknown.status, 1)
      assert.match(revokeUnknown.stderr, /no active key with id 01890a5d-ac96-774b-bcce-b302099a8057/)
      const created = cli('keys', 'create', '--name', 'listed')
      assert.equal(created.status, 0)
      const id = /key id (\S+),/.exec(created.stdout)?.[1] as string
      assert.match(created.stdout, /role member, workspace default/)
      const list = cli('keys', 'list').stdout.trim().split('\n')
      assert.match(list[0] as string, /^ID\s+WORKSPACE\s+HANDLE\s+ROLE\s+AGENT\s+NAME\s+STATE$/)
      assert.match(list[1] as string, new RegExp(`^${id}\\s+default\\s+@listed\\s+member\\s+-\\s+listed\\s+active$`))
      assert.equal(cli('keys', 'revoke', id).status, 0)
      assert.match(cli('keys', 'list').stdout, /revoked \d{4}-/)
    } finally {
      for (const suffix of ['', '-wal', '-shm']) rmSync(db + suffix, { force: true })
    }
  })
})
