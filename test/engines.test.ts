// Tandem supports Node 22.14 and later (Node-API 10, which better-sqlite3 13 needs; 12.x aborts on Node 24.19+
// when the garbage collector finalises a statement). Every installed package accepts the Node lines we
// support, so `npm ci` prints no EBADENGINE warning on 22.14, on the latest 22 or on 24; and this Node is one.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import semver from 'semver'

const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } }
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as { packages: Record<string, { version?: string; engines?: unknown }> }
const SUPPORTED = ['22.14.0', '22.99.0', '24.0.0', '24.99.0']

describe('Node versions', () => {
  it('engines accepts Node 22.14+ and 24, and not Node 20', () => {
    for (const version of SUPPORTED) assert.ok(semver.satisfies(version, pkg.engines.node), version)
    assert.equal(semver.satisfies('20.19.0', pkg.engines.node), false)
  })

  it('this process runs on a supported Node, with Node-API 10 or later', () => {
    assert.ok(semver.satisfies(process.version, pkg.engines.node), process.version)
    assert.ok(Number(process.versions.napi) >= 10)
  })

  it('no installed package refuses a supported Node (no EBADENGINE warning from npm ci)', () => {
    const refusing: string[] = []
    for (const [path, entry] of Object.entries(lock.packages)) {
      const range = (entry.engines as { node?: string } | undefined)?.node
      if (path === '' || typeof range !== 'string') continue
      for (const version of SUPPORTED) if (!semver.satisfies(version, range)) refusing.push(`${path}@${entry.version} wants node ${range}, not ${version}`)
    }
    assert.deepEqual(refusing, [])
  })
})
