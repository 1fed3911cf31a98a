// The README's examples are tests. To have a block run, put the marker line `<!-- readme-test -->` right
// above a ```sh block; a ```text block right after it (optional) is its expected output, where `…` stands for
// any text within a line (ids, timestamps). Marked blocks run in README order in ONE bash session (so
// variables carry over) in a fresh temporary directory, against a fresh server on a new SQLite file whose
// URL is in $TANDEM_URL (write `T=${TANDEM_URL:-http://127.0.0.1:3000}` so that readers can copy the block).
// As for a reader in the repository, `npm run cli …` works there and opens the server's database: `npm` runs
// with `--prefix <the repository>` and DATABASE_URL is the server's.
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer, type ChildServer } from './child-server.js'

const MARKER = '<!-- readme-test -->'

export function markedBlocks(markdown: string): Array<{ script: string; expected?: string; line: number }> {
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
    if (!script) throw new Error(`README line ${i + 1}: ${MARKER} must be followed by a \`\`\`sh block`)
    const expected = fence(script.end + 1, 'text')
    blocks.push({ script: script.body, expected: expected?.body, line: i + 1 })
  })
  return blocks
}

const pattern = (expected: string) =>
  new RegExp('^' + expected.split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[^\\n]*?') + '$')

describe('README examples', () => {
  let server: ChildServer
  let url: string
  const dir = mkdtempSync(join(tmpdir(), 'tandem-readme-'))
  const databaseUrl = `sqlite:${join(dir, 'tandem.db')}`
  before(async () => {
    server = startServer({ DATABASE_URL: databaseUrl })
    url = await server.url
  })
  after(async () => {
    await server.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('finds the marked blocks', () => {
    assert.ok(markedBlocks(readFileSync('README.md', 'utf8')).length >= 1)
  })

  it('runs every marked block and gets the output the README shows', () => {
    const blocks = markedBlocks(readFileSync('README.md', 'utf8'))
    const separator = (i: number) => `---readme-block-${i}---`
    const npm = `npm() { command npm --prefix ${JSON.stringify(process.cwd())} "$@"; }`
    const script = ['set -u', npm, ...blocks.map((block, i) => `${block.script}\necho '${separator(i)}'`)].join('\n')
    const run = spawnSync('bash', ['-c', script], { cwd: dir, env: { ...process.env, TANDEM_URL: url, DATABASE_URL: databaseUrl }, encoding: 'utf8', timeout: 120_000 })
    assert.equal(run.status, 0, run.stderr)
    let rest = run.stdout
    blocks.forEach((block, i) => {
      const at = rest.indexOf(separator(i) + '\n')
      assert.notEqual(at, -1, `block at README line ${block.line} ran to its end`)
      const output = rest.slice(0, at).replace(/\n$/, '')
      rest = rest.slice(at + separator(i).length + 1)
      if (block.expected !== undefined) assert.match(output, pattern(block.expected), `block at README line ${block.line}`)
    })
  })
})
