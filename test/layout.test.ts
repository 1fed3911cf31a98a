// The code layout in docs/architecture.md stays true: every folder of src/ has its line at the start of a line
// of the layout block, and every src/<folder>/ the block names exists; every folder inside one (a wing such as
// src/runs/machine/) is named in its folder's entry, and every wing an entry lists at the start of a line exists.
import { it } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'

const ROOT = resolve(import.meta.dirname, '..')

function layoutBlock(): string {
  const doc = readFileSync(resolve(ROOT, 'docs/architecture.md'), 'utf8')
  const section = doc.slice(doc.indexOf('## Code layout'))
  return section.slice(section.indexOf('```\n') + 4, section.indexOf('\n```', section.indexOf('```\n') + 4))
}

const foldersIn = (dir: string) => readdirSync(resolve(ROOT, dir), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort()

it('docs/architecture.md "Code layout" lists exactly the folders of src/', () => {
  const block = layoutBlock()
  const listed = [...block.matchAll(/^src\/([a-z0-9-]+)\//gm)].map((m) => m[1] as string)
  const named = [...block.matchAll(/(?<![\w/])src\/([a-z0-9-]+)\//g)].map((m) => m[1] as string).filter((name) => name !== '<feature>')
  const folders = readdirSync(resolve(ROOT, 'src'), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort()
  assert.deepEqual(folders.filter((f) => !listed.includes(f)), [], 'folders of src/ without their line in the layout')
  assert.deepEqual([...new Set(named)].filter((n) => !folders.includes(n)).sort(), [], 'folders the layout names that src/ does not have')
})

it('docs/architecture.md "Code layout" names the folders inside each folder of src/ in its entry, and no other', () => {
  // An entry: a line starting with src/<folder>/ and the indented lines under it.
  const entries = new Map([...layoutBlock().matchAll(/^src\/([a-z0-9-]+)\/.*(?:\n[ \t].*)*/gm)].map((m) => [m[1] as string, m[0]]))
  for (const folder of foldersIn('src')) {
    const entry = entries.get(folder) ?? ''
    const missing = foldersIn(`src/${folder}`).filter((inner) => !new RegExp(`(^|[\\s(,])${inner}/`).test(entry))
    assert.deepEqual(missing, [], `folders inside src/${folder}/ its entry does not name`)
    const listed = [...entry.matchAll(/^[ \t]+([a-z0-9-]+)\/[ \t]/gm)].map((m) => m[1] as string)
    assert.deepEqual(listed.filter((inner) => !foldersIn(`src/${folder}`).includes(inner)), [], `wings src/${folder}/'s entry lists that it does not have`)
  }
})
