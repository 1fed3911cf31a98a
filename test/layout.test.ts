// The code layout in docs/architecture.md stays true: every folder of src/ has its line at the start of a line
// of the layout block, and every src/<folder>/ the block names exists.
import { it } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'

const ROOT = resolve(import.meta.dirname, '..')

it('docs/architecture.md "Code layout" lists exactly the folders of src/', () => {
  const doc = readFileSync(resolve(ROOT, 'docs/architecture.md'), 'utf8')
  const section = doc.slice(doc.indexOf('## Code layout'))
  const block = section.slice(section.indexOf('```\n') + 4, section.indexOf('\n```', section.indexOf('```\n') + 4))
  const listed = [...block.matchAll(/^src\/([a-z0-9-]+)\//gm)].map((m) => m[1] as string)
  const named = [...block.matchAll(/(?<![\w/])src\/([a-z0-9-]+)\//g)].map((m) => m[1] as string).filter((name) => name !== '<feature>')
  const folders = readdirSync(resolve(ROOT, 'src'), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort()
  assert.deepEqual(folders.filter((f) => !listed.includes(f)), [], 'folders of src/ without their line in the layout')
  assert.deepEqual([...new Set(named)].filter((n) => !folders.includes(n)).sort(), [], 'folders the layout names that src/ does not have')
})
