// Build safety for `npm start` (scripts/start.mjs): a build is announced ("building…"), a failed type check never
// starts the server (not even a stale dist/), and a change to tsconfig*.json or the lock file rebuilds.
// The real project is built once, in a copy, to show that what `npm start` builds runs. The rules about when to
// build and what a failed build leaves are start.mjs's own, whatever it compiles, so they are checked on a
// two-file project with the same scripts: each of its builds takes a second where the real one takes half a minute.
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { appendFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

// PORT=eighty: a successful build goes on to start the server, which then stops at once on its configuration.
const start = (dir: string) => spawnSync(process.execPath, ['scripts/start.mjs'], { cwd: dir, env: { ...process.env, PORT: 'eighty' }, encoding: 'utf8' })

function copyOf(entries: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-build-'))
  for (const entry of entries) cpSync(entry, join(dir, entry), { recursive: true })
  symlinkSync(resolve('node_modules'), join(dir, 'node_modules'))
  return dir
}

describe('npm start builds the project and runs what it built', () => {
  let dir: string
  before(() => {
    dir = copyOf(['src', 'scripts', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json'])
  })
  after(() => rmSync(dir, { recursive: true, force: true }))

  it('builds, and runs what it built', () => {
    const run = start(dir)
    assert.match(run.stdout, /^tandem: building… \(first start takes about half a minute\)$/m, 'the build is announced')
    assert.match(run.stderr, /tandem: invalid configuration: PORT/)
    assert.ok(existsSync(join(dir, 'dist/main.js')))
    assert.doesNotMatch(start(dir).stdout, /tandem: building/, 'nothing changed: no build, no announcement')
  })
})

describe('npm start builds safely', () => {
  let dir: string
  const main = `import { answer } from './ids.js'\nconsole.error(\`tandem: invalid configuration: PORT (\${answer})\`)\nprocess.exit(1)\n`
  const ids = 'export const answer: number = 42\n'
  before(() => {
    dir = copyOf(['scripts', 'package.json', 'package-lock.json'])
    mkdirSync(join(dir, 'src'))
    writeFileSync(join(dir, 'src/main.ts'), main)
    writeFileSync(join(dir, 'src/ids.ts'), ids)
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { target: 'ES2023', module: 'NodeNext', moduleResolution: 'NodeNext', types: ['node'], strict: true, skipLibCheck: true } }))
    cpSync('tsconfig.build.json', join(dir, 'tsconfig.build.json'))
  })
  after(() => rmSync(dir, { recursive: true, force: true }))

  it('a type error stops npm start with a non-zero exit and leaves nothing to run', () => {
    assert.match(start(dir).stderr, /invalid configuration: PORT \(42\)/, 'the project builds and runs')
    const file = join(dir, 'src/ids.ts')
    appendFileSync(file, '\nexport const broken: number = "not a number"\n')
    const run = start(dir)
    assert.notEqual(run.status, 0)
    assert.match(run.stdout + run.stderr, /TS2322/)
    assert.match(run.stderr, /the build failed/)
    assert.doesNotMatch(run.stderr, /invalid configuration/, 'the server did not start')
    assert.equal(existsSync(join(dir, 'dist/main.js')), false)
    // A second start still refuses (the stale output was removed, so nothing is run).
    assert.notEqual(start(dir).status, 0)
    writeFileSync(file, ids)
  })

  it('a change to tsconfig.build.json or the lock file rebuilds', () => {
    start(dir)
    const built = statSync(join(dir, 'dist/main.js')).mtimeMs
    assert.equal(start(dir).status, 1)
    assert.equal(statSync(join(dir, 'dist/main.js')).mtimeMs, built, 'nothing changed: no rebuild')
    let previous = built
    const inputs = ['tsconfig.build.json', 'package-lock.json']
    for (const input of inputs) {
      // Only this input is newer than the build: the other one cannot be what triggered it.
      const past = new Date(previous - 60_000)
      for (const each of inputs) utimesSync(join(dir, each), past, past)
      const later = new Date(previous + 5000)
      utimesSync(join(dir, input), later, later)
      assert.match(start(dir).stdout, /tandem: building/, `${input} is announced as a rebuild`)
      const rebuilt = statSync(join(dir, 'dist/main.js')).mtimeMs
      assert.ok(rebuilt > previous, `${input} triggered a rebuild`)
      previous = rebuilt
    }
  })
})
