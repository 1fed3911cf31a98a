// docs/operations.md documents every setting `npm start -- --help` prints, once: one row of its settings table
// per variable, none missing and none twice.
import { it } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { helpText } from '../src/help.js'

it('every setting --help prints has one row in docs/operations.md', () => {
  const printed = new Set(helpText().split('\n').filter((line) => /^ {2}[A-Z]/.test(line)).flatMap((line) => line.trim().split(/,\s*/)))
  const rows = readFileSync('docs/operations.md', 'utf8').split('\n').filter((line) => line.startsWith('| `'))
  const documented = rows.flatMap((row) => [...(row.split(' | ')[0] ?? '').matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1] as string))
  const missing = [...printed].filter((name) => !documented.includes(name))
  const twice = documented.filter((name, i) => documented.indexOf(name) !== i)
  assert.ok(printed.size >= 30, `read the settings from --help (${printed.size})`)
  assert.deepEqual(missing, [], 'settings --help prints that docs/operations.md does not document')
  assert.deepEqual(twice, [], 'settings documented twice')
})
