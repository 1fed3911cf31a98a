// Build safety for `npm start` (scripts/start.mjs), in a copy of the project: a build is announced ("building…"),
// a failed type check never starts the server (not even a stale dist/), and a change to tsconfig*.json or the
// lock file rebuilds.
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { appendFileSync, cpSync, existsSync, mkdtempSync, rmSync, statSync, symlinkSync, utimesSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

describe('npm start builds safely', () => {
  let dir: string
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'tandem-build-'))
    for (const entry of ['src', 'scripts', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json']) cpSync(entry, join(dir, entry), { recursive: true })
    symlinkSync(resolve('node_modules'), join(dir, 'node_modules'))
  })
  after(() => rmSync(dir, { recursive: true, force: true }))

  // PORT=eighty: a successful build goes on to start the server, which then stops at once on its configuration.
  const start = () => spawnSync(process.execPath, ['scripts/start.mjs'], { cwd: dir, env: { ...process.env, PORT: 'eighty' }, encoding: 'utf8' })

  it('builds, and runs what it built', () => {
    const run = start()
    assert.match(run.stdout, /^tandem: building… \(first start takes about half a minute\)$/m, 'the build is announced')
    assert.match(run.stderr, /tandem: invalid configuration: PORT/)
    assert.ok(existsSync(join(dir, 'dist/main.js')))
    assert.doesNotMatch(start().stdout, /tandem: building/, 'nothing changed: no build, no announcement')
  })

  it('a type error stops npm start with a non-zero exit and leaves nothing to run', () => {
    const file = join(dir, 'src/ids.ts')
    appendFileSync(file, '\nexport const broken: number = "not a number"\n')
    const run = start()
    assert.notEqual(run.status, 0)
    assert.match(run.stdout + run.stderr, /TS2322/)
    assert.match(run.stderr, /the build failed/)
    assert.doesNotMatch(run.stderr, /invalid configuration/, 'the server did not start')
    assert.equal(existsSync(join(dir, 'dist/main.js')), false)
    // A second start still refuses (the stale output was removed, so nothing is run).
    assert.notEqual(start().status, 0)
    cpSync('src/ids.ts', file)
  })

  it('a change to tsconfig.build.json or the lock file rebuilds', () => {
    start()
    const built = statSync(join(dir, 'dist/main.js')).mtimeMs
    assert.equal(start().status, 1)
    assert.equal(statSync(join(dir, 'dist/main.js')).mtimeMs, built, 'nothing changed: no rebuild')
    let previous = built
    for (const input of ['tsconfig.build.json', 'package-lock.json']) {
      const later = new Date(Date.now() + 5000)
      utimesSync(join(dir, input), later, later)
      start()
      const rebuilt = statSync(join(dir, 'dist/main.js')).mtimeMs
      assert.ok(rebuilt > previous, `${input} triggered a rebuild`)
      previous = rebuilt
    }
  })
})
