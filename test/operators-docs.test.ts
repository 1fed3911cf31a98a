// docs/operators.md's walk-throughs are tests, as the README's are (see test/readme.test.ts for the markers):
// the marked blocks run in order in one bash session against a fresh server on a new SQLite file.
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer, type ChildServer } from './child-server.js'

const MARKER = '<!-- readme-test -->'
const PAGE = 'docs/operators.md'

function markedBlocks(markdown: string): Array<{ script: string; expected?: string; line: number }> {
  const lines = markdown.split('\n')
  const blocks: Array<{ script: string; expected?: string; line: number }> = []
  const fence = (start: number, language: string) => {
    if (lines[start]?.trim() !== '```' + language) return undefined
    const end = lines.indexOf('```', start + 1)
    return { body: lines.slice(start + 1, end).join('\n'), end }
  }
  lines.forEach((line, i) => {
    if (line.trim() !== MARKER) return
    const script = fence(i + 1, 'sh')
    if (!script) throw new Error(`${PAGE} line ${i + 1}: ${MARKER} must be followed by a \`\`\`sh block`)
    blocks.push({ script: script.body, expected: fence(script.end + 1, 'text')?.body, line: i + 1 })
  })
  return blocks
}

const pattern = (expected: string) =>
  new RegExp('^' + expected.split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[^\\n]*?') + '$')

describe(`${PAGE} examples`, () => {
  let server: ChildServer
  let url: string
  const dir = mkdtempSync(join(tmpdir(), 'tandem-operators-docs-'))
  const databaseUrl = `sqlite:${join(dir, 'tandem.db')}`
  before(async () => {
    server = startServer({ DATABASE_URL: databaseUrl })
    url = await server.url
  })
  after(async () => {
    await server.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('runs every marked block and gets the output the page shows', { timeout: 180000 }, () => {
    const blocks = markedBlocks(readFileSync(PAGE, 'utf8'))
    assert.ok(blocks.length >= 3)
    const separator = (i: number) => `---docs-block-${i}---`
    const npm = `npm() { command npm --prefix ${JSON.stringify(process.cwd())} "$@"; }`
    const script = ['set -u', npm, ...blocks.map((block, i) => `${block.script}\necho '${separator(i)}'`)].join('\n')
    const run = spawnSync('bash', ['-c', script], { cwd: dir, env: { ...process.env, TANDEM_URL: url, DATABASE_URL: databaseUrl }, encoding: 'utf8', timeout: 150_000 })
    assert.equal(run.status, 0, run.stderr)
    let rest = run.stdout
    blocks.forEach((block, i) => {
      const at = rest.indexOf(separator(i) + '\n')
      assert.notEqual(at, -1, `block at ${PAGE} line ${block.line} ran to its end`)
      const output = rest.slice(0, at).replace(/\n$/, '')
      rest = rest.slice(at + separator(i).length + 1)
      if (block.expected !== undefined) assert.match(output, pattern(block.expected), `block at ${PAGE} line ${block.line}`)
    })
  })
})
