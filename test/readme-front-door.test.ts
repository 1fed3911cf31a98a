// The README is a front door, not a reference: at most 300 lines; its first 60 say what Tandem is,
// give the two set-up commands and the test command and link into docs/; then the console's picture, the
// concepts with a diagram, one walk-through (run by test/readme.test.ts), the ten most-used settings, and
// links to the reference pages, each of which exists (test/docs-links.test.ts checks every link resolves).
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'

const readme = readFileSync('README.md', 'utf8')
const lines = readme.split('\n')
const section = (heading: string) => {
  const start = lines.findIndex((line) => line.startsWith('## ') && line.includes(heading))
  assert.notEqual(start, -1, `a "## …${heading}…" section`)
  const end = lines.findIndex((line, i) => i > start && line.startsWith('## '))
  return lines.slice(start, end === -1 ? undefined : end).join('\n')
}

describe('README.md as a front door', () => {
  it('is at most 300 lines', () => {
    assert.ok(lines.length <= 300, `${lines.length} lines`)
  })

  it('its first 60 lines say what Tandem is, give the set-up and test commands and link into docs/', () => {
    const head = lines.slice(0, 60).join('\n')
    assert.match(lines[2] ?? '', /^Tandem is /)
    for (const command of ['npm ci', 'npm start', 'npm test']) assert.match(head, new RegExp(`^(?:[A-Z_]+=\\S+ )*${command}\\b`, 'm'), command)
    assert.ok((head.match(/\]\(docs\/[^)]+\.md[^)]*\)/g) ?? []).length >= 5, 'links into docs/')
  })

  it('then a screenshot of the console, and the concepts with a diagram', () => {
    const picture = lines.findIndex((line) => /^!\[[^\]]*\]\(docs\/console\.png\)/.test(line))
    assert.ok(picture > lines.findIndex((line) => line.startsWith('npm test')), 'docs/console.png is shown, after the commands')
    assert.ok(picture < lines.findIndex((line) => line.startsWith('## Concepts')), 'the picture comes before the concepts')
    assert.ok(existsSync('docs/console.png'))
    const concepts = section('Concepts')
    for (const word of ['stream', 'agent', 'cycle', 'phases', 'operator pool', 'gate', 'run', 'task']) assert.match(concepts, new RegExp(`\\*\\*${word}\\*\\*`), word)
    assert.match(concepts, /```text\n[\s\S]*──▶[\s\S]*```/, 'a diagram')
  })

  it('one walk-through, showing the three operations and ending with an approval in the console', () => {
    assert.equal(lines.filter((line) => line.startsWith('## Walk-through')).length, 1)
    const walk = section('Walk-through')
    assert.match(walk, /\/api\/agents /)
    assert.match(walk, /cycles\/draft/)
    assert.match(walk, /-X PATCH [^\n]*if-match/i)
    assert.match(walk, /Runs\*\* tab[\s\S]*\*\*Approve\*\*/)
  })

  it('the ten most-used settings, each one that --help lists', async () => {
    const { SETTINGS } = await import('../src/help.js')
    const listed = new Set(SETTINGS.flatMap((group) => group.settings.flatMap((s) => s.name.split(', '))))
    const rows = [...section('Settings').matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1] as string)
    assert.equal(rows.length, 10, rows.join(', '))
    for (const name of rows) assert.ok(listed.has(name), `${name} is in npm start -- --help`)
  })

  it('the reference lives in docs/, one page per subject', () => {
    for (const page of ['api.md', 'api-contract.md', 'runs-and-events.md', 'agents-and-vendors.md', 'operations.md', 'security.md', 'performance.md', 'architecture.md', 'contributing.md']) {
      assert.ok(existsSync(`docs/${page}`), page)
      assert.ok(readme.includes(`(docs/${page}`), `README links to docs/${page}`)
    }
    assert.match(readFileSync('docs/architecture.md', 'utf8'), /^## Code layout$/m)
    assert.match(readFileSync('docs/contributing.md', 'utf8'), /^## Run one test file$/m)
  })
})
