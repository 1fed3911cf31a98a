// The layering rules of `npm run lint` (.dependency-cruiser.cjs): src/ as it is passes; a small tree written for
// the test fails on a circle among value imports and on infrastructure importing a feature at run time, and
// passes a circle of type-only imports (erased at run time).
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'

const ROOT = resolve(import.meta.dirname, '..')
const CLI = join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruiser.mjs')
const CONFIG = join(ROOT, '.dependency-cruiser.cjs')

function cruise(cwd: string): { status: number | null; output: string } {
  const run = spawnSync(process.execPath, [CLI, 'src', '--config', CONFIG, '--output-type', 'err'], { cwd, encoding: 'utf8' })
  return { status: run.status, output: `${run.stdout}${run.stderr}` }
}

/** A throwaway tree of src/ files (path → source), cruised from its own folder. */
function tree(files: Record<string, string>): { cwd: string; remove(): void } {
  const cwd = mkdtempSync(join(tmpdir(), 'tandem-layers-'))
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(dirname(join(cwd, path)), { recursive: true })
    writeFileSync(join(cwd, path), source)
  }
  return { cwd, remove: () => rmSync(cwd, { recursive: true, force: true }) }
}

describe('layered imports (dependency-cruiser)', () => {
  it('src/ has no violation', () => {
    const { status, output } = cruise(ROOT)
    assert.equal(status, 0, output)
  })

  it('fails on a circle among value imports, names it; a type-only circle passes', () => {
    const circle = tree({
      'src/runs/machine.ts': "import { settle } from './calls.js'\nexport const move = () => settle()\n",
      'src/runs/calls.ts': "import { move } from './machine.js'\nexport const settle = () => 1\nexport const again = () => move()\n",
      'src/waits/a.ts': "import type { B } from './b.js'\nexport interface A { b?: B }\n",
      'src/waits/b.ts': "import type { A } from './a.js'\nexport interface B { a?: A }\n",
    })
    try {
      const { status, output } = cruise(circle.cwd)
      assert.notEqual(status, 0, output)
      assert.match(output, /no-circular/)
      assert.match(output, /src\/runs\/machine\.ts/)
      assert.doesNotMatch(output, /src\/waits\/a\.ts/)
    } finally {
      circle.remove()
    }
  })

  it('fails when infrastructure (src/db, src/http, a top-level file, …) imports a feature at run time; a type import passes', () => {
    const upward = tree({
      'src/http/auth.ts': "import { findPrincipal } from '../principals/store.js'\nexport const check = () => findPrincipal()\n",
      'src/db/context.ts': "import type { Vault } from '../credentials/vault.js'\nexport interface DbContext { vault?: Vault }\n",
      'src/principals/store.ts': 'export const findPrincipal = () => 1\n',
      'src/credentials/vault.ts': 'export interface Vault { seal(): void }\n',
    })
    try {
      const { status, output } = cruise(upward.cwd)
      assert.notEqual(status, 0, output)
      assert.match(output, /infrastructure-imports-no-feature: src\/http\/auth\.ts → src\/principals\/store\.ts/)
      assert.doesNotMatch(output, /src\/db\/context\.ts →/)
    } finally {
      upward.remove()
    }
  })
})
