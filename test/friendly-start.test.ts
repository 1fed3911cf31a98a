// The first start as a newcomer meets it: `--help` prints the settings and exits 0; a SQLite path two missing
// folders deep is refused in one line naming the missing folder (and nothing is created); on a terminal a
// banner names the console, the API docs, the database and the auth mode; elsewhere the JSON listening line
// carries the same facts.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer } from './child-server.js'
import { TYPESCRIPT_LOADER } from '../scripts/typescript-loader.mjs'
import { SETTINGS } from '../src/help.js'
import { nodeVersionProblem, sqliteFolderProblem } from '../src/startup.js'
import { describeDatabase } from '../src/banner.js'

const tsxMain = [process.execPath, ...TYPESCRIPT_LOADER, 'src/main.ts']

describe('npm start -- --help', () => {
  it('prints every setting and exits 0, without starting anything', () => {
    const run = spawnSync('npm', ['start', '--silent', '--', '--help'], { encoding: 'utf8', timeout: 120_000, env: { ...process.env, PORT: '1' } })
    assert.equal(run.status, 0, run.stderr)
    assert.match(run.stdout, /^Usage: npm start/)
    for (const name of ['PORT', 'DATABASE_URL', 'TANDEM_AUTH', 'TANDEM_EGRESS_ALLOW', 'TANDEM_SECRET_KEY']) assert.match(run.stdout, new RegExp(`^  ${name}\\b`, 'm'))
  })

  it('the built entry answers --help too (a deployment without tsx)', () => {
    const run = spawnSync(tsxMain[0] as string, [...tsxMain.slice(1), '--help'], { encoding: 'utf8', timeout: 60_000 })
    assert.equal(run.status, 0, run.stderr)
    assert.match(run.stdout, /DATABASE_URL/)
  })

  it('lists every variable src/config.ts reads', () => {
    const read = new Set([...readFileSync('src/config.ts', 'utf8').matchAll(/env\.([A-Z][A-Z0-9_]+)/g)].map((m) => m[1]))
    const listed = SETTINGS.flatMap((group) => group.settings.flatMap((s) => s.name.split(', ')))
    for (const name of read) assert.ok(listed.includes(name as string), `${name} is missing from --help`)
  })
})

describe('a SQLite path whose folder has no parent', () => {
  it('is refused in one line naming the missing folder, and nothing is created', () => {
    const root = join(tmpdir(), `tandem-missing-${process.pid}`)
    const run = spawnSync(tsxMain[0] as string, tsxMain.slice(1), { encoding: 'utf8', timeout: 60_000, env: { ...process.env, PORT: '0', DATABASE_URL: `sqlite:${root}/dir/x.db` } })
    assert.equal(run.status, 1)
    const lines = run.stderr.trim().split('\n')
    assert.equal(lines.length, 1, run.stderr)
    assert.match(lines[0] as string, new RegExp(`^tandem: cannot create the SQLite database at .*: the folder ${root} does not exist .*DATABASE_URL`))
    assert.equal(existsSync(root), false)
  })

  it('one missing folder is fine (it is created at start-up); memory and PostgreSQL are not paths', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tandem-folder-'))
    try {
      assert.equal(sqliteFolderProblem(`sqlite:${dir}/new/x.db`), null)
      assert.equal(sqliteFolderProblem(`sqlite:${dir}/x.db`), null)
      assert.match(sqliteFolderProblem(`sqlite:${dir}/a/b/x.db`) ?? '', new RegExp(`the folder ${dir}/a does not exist`))
      assert.equal(sqliteFolderProblem('sqlite::memory:'), null)
      assert.equal(sqliteFolderProblem('postgres://u:p@127.0.0.1:5432/db'), null)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('listening', () => {
  it('elsewhere than a terminal: one JSON line with the console and docs URLs, the database (no password) and the auth mode', async () => {
    const server = startServer({ DATABASE_URL: 'sqlite::memory:' })
    try {
      const url = await server.url
      const line = server.lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => String(l.msg).startsWith('Tandem listening on'))
      assert.equal(line?.console, `${url}/`)
      assert.equal(line?.docs, `${url}/docs`)
      assert.equal(line?.database, 'SQLite in memory (forgotten when the server stops)')
      assert.equal(line?.auth, 'local')
    } finally {
      await server.stop()
    }
    assert.equal(describeDatabase('postgres://tandem:secret-password@db.internal:6543/prod'), 'PostgreSQL at db.internal:6543/prod')
  })

  it('on a terminal: a banner with the console and API docs URLs in full, the database and the auth mode', async () => {
    // script(1) gives the server a pseudo-terminal, as a person's shell would.
    const command = `PORT=0 DATABASE_URL=sqlite::memory: LOG_LEVEL=info ${tsxMain.join(' ')}`
    const child = spawn('script', ['-qec', command, '/dev/null'], { stdio: ['pipe', 'pipe', 'inherit'] })
    let output = ''
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no banner within 60 s:\n${output}`)), 60_000)
        child.stdout.on('data', (chunk: Buffer) => {
          output += chunk.toString('utf8')
          if (/API docs: [^\n]*\n/.test(output) && /INFO[^\n]*\n/.test(output)) {
            clearTimeout(timer)
            resolve()
          }
        })
      })
    } finally {
      child.kill('SIGTERM')
    }
    const text = output.replace(/\r/g, '')
    const base = /Tandem is listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(text)?.[1]
    assert.ok(base, text)
    assert.ok(text.includes(`  Console: ${base}/\n`), text)
    assert.ok(text.includes(`  API docs: ${base}/docs\n`), text)
    assert.match(text, / {2}Database: SQLite in memory/)
    assert.match(text, / {2}Auth: local \(no key needed from this machine\)/)
    // Logs are pretty there (pino-pretty: a time and a level word), not JSON.
    assert.doesNotMatch(text, /^\{"level"/m)
    assert.match(text, /^\[\d\d:\d\d:\d\d\] .*INFO.*: /m)
  })
})

describe('an unsupported Node', () => {
  it('is refused in one line naming the version needed, before anything loads', () => {
    assert.equal(nodeVersionProblem('24.0.0'), null)
    assert.equal(nodeVersionProblem('22.14.0'), null)
    assert.match(nodeVersionProblem('22.13.1') ?? '', /^Node 22\.13\.1 is too old: Tandem needs Node 22\.14 or later/)
    assert.match(nodeVersionProblem('20.20.2') ?? '', /^Node 20\.20\.2 is too old/)
  })
})
