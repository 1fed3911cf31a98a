// Start-up failures through the real `npm start` (build included): each is one line on stderr naming the
// cause and the variable to change, exit code 1, no stack. And `npm start &` then `kill $!` stops the server.
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { createServer, type Server } from 'node:net'
import { rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer } from './child-server.js'
import { dialects, TEST_SECRET_KEY } from './helpers.js'

const POSTGRES_URL = process.env.TANDEM_TEST_POSTGRES_URL

function npmStart(env: Record<string, string>) {
  const result = spawnSync('npm', ['start', '--silent'], { env: { ...process.env, LOG_LEVEL: 'info', TANDEM_SECRET_KEY: TEST_SECRET_KEY, ...env }, encoding: 'utf8', timeout: 600_000 })
  const lines = result.stderr.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('npm warn'))
  return { status: result.status, lines }
}

function assertOneLine(run: { status: number | null; lines: string[] }, pattern: RegExp) {
  assert.equal(run.status, 1, run.lines.join('\n'))
  assert.equal(run.lines.length, 1, run.lines.join('\n'))
  assert.match(run.lines[0] as string, pattern)
  assert.doesNotMatch(run.lines[0] as string, /\n|^\s+at /)
}

describe('npm start refuses to start with one line', { concurrency: false }, () => {
  let busy: Server
  let busyPort: number
  const file = join(tmpdir(), `tandem-not-a-dir-${process.pid}`)
  before(async () => {
    writeFileSync(file, 'a file, not a directory')
    busy = createServer().listen(0, '127.0.0.1')
    await once(busy, 'listening')
    busyPort = (busy.address() as { port: number }).port
  })
  after(() => {
    busy.close()
    rmSync(file, { force: true })
  })

  it('port in use (EADDRINUSE): names PORT', () => {
    assertOneLine(npmStart({ PORT: String(busyPort), DATABASE_URL: 'sqlite::memory:' }), /^tandem: port \d+ on 127\.0\.0\.1 is already in use; set PORT/)
  })

  it('PostgreSQL down: names DATABASE_URL', () => {
    // Port 1: nothing listens there.
    assertOneLine(npmStart({ PORT: '0', DATABASE_URL: 'postgres://postgres@127.0.0.1:1/test' }), /^tandem: cannot connect to PostgreSQL at 127\.0\.0\.1:1 \(connection refused\).*DATABASE_URL/)
  })

  it('unwritable SQLite path: names DATABASE_URL', () => {
    assertOneLine(npmStart({ PORT: '0', DATABASE_URL: `sqlite:${file}/sub/tandem.db` }), /^tandem: cannot open the SQLite database at .* set DATABASE_URL to a writable path/)
  })

  it('a model drafter without its key: names ANTHROPIC_API_KEY', () => {
    assertOneLine(npmStart({ PORT: '0', DATABASE_URL: 'sqlite::memory:', TANDEM_DRAFTER: 'anthropic:claude-x', ANTHROPIC_API_KEY: '' }), /^tandem: invalid configuration: ANTHROPIC_API_KEY: is required/)
  })

  it('the stack is shown at LOG_LEVEL=debug', () => {
    const run = npmStart({ PORT: String(busyPort), DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'debug' })
    assert.equal(run.status, 1)
    assert.match(run.lines[0] as string, /already in use/)
    assert.ok(run.lines.some((line) => /^\s+at /.test(line)), 'a stack follows')
  })

  if (POSTGRES_URL && dialects().includes('postgres')) {
    it('missing PostgreSQL database: names it and DATABASE_URL', () => {
      const url = new URL(POSTGRES_URL)
      url.pathname = '/tandem_no_such_database'
      assertOneLine(npmStart({ PORT: '0', DATABASE_URL: url.toString() }), /^tandem: the PostgreSQL database "tandem_no_such_database" does not exist .*DATABASE_URL/)
    })

    it('missing PostgreSQL role: names it and DATABASE_URL, never a password', () => {
      const url = new URL(POSTGRES_URL)
      url.username = 'tandem_no_such_role'
      url.password = 'secret-password'
      const run = npmStart({ PORT: '0', DATABASE_URL: url.toString() })
      assertOneLine(run, /^tandem: PostgreSQL at .* refused the role "tandem_no_such_role" .*DATABASE_URL/)
      assert.doesNotMatch(run.lines[0] as string, /secret-password/)
    })
  }

  it('npm start & kill $!: the server stops with npm', async () => {
    // Only npm's own exit is awaited (server.stop() would also wait for the server behind it to close its output).
    const { child, url: listening } = startServer({ DATABASE_URL: 'sqlite::memory:' }, { command: ['npm', 'start', '--silent'] })
    const url = await listening
    assert.equal((await fetch(`${url}/healthz`)).status, 200)
    child.kill('SIGTERM')
    await once(child, 'exit')
    const deadline = Date.now() + 10_000
    let stopped = false
    while (!stopped && Date.now() < deadline) {
      stopped = await fetch(`${url}/healthz`).then(() => false, () => true)
      if (!stopped) await new Promise((resolve) => setTimeout(resolve, 200))
    }
    assert.ok(stopped, 'nothing answers any more')
  })
})
