// The walk-throughs of README.md and docs/*.md are tests. To have a block run, put the marker line
// `<!-- readme-test -->` right above a ```sh block; a ```text block right after it (optional) is its expected
// output, where `…` stands for any text within a line (ids, timestamps). The marked blocks of one file run in
// order in ONE bash session (so variables carry over) in a fresh temporary directory, against a fresh server on
// a new SQLite file whose URL is in $TANDEM_URL (write `T=${TANDEM_URL:-http://127.0.0.1:3000}` so that readers
// can copy the block). The server allows calls to 127.0.0.0/8 (TANDEM_EGRESS_ALLOW, as the README's start
// command does), $DEMO_AGENT_PORT is a free port for the demo agent and $TMPDIR is the temporary directory. As for a reader in the repository,
// `npm run …` works there and opens the server's database: `npm` runs with `--prefix <the repository>` and
// DATABASE_URL is the server's. Whatever a block leaves running in the background is stopped at the end.
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer, type ChildServer } from './child-server.js'
import { waitFor } from './wait.js'

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
    if (!script) throw new Error(`line ${i + 1}: ${MARKER} must be followed by a \`\`\`sh block`)
    const expected = fence(script.end + 1, 'text')
    blocks.push({ script: script.body, expected: expected?.body, line: i + 1 })
  })
  return blocks
}

const pattern = (expected: string) =>
  new RegExp('^' + expected.split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[^\\n]*?') + '$')

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** Runs `script` in bash in its own process group; once bash exits, whatever it left behind is stopped too. */
async function runBash(script: string, cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn('bash', ['-c', script], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')))
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
  const status = await new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  clearTimeout(timer)
  try {
    process.kill(-(child.pid as number), 'SIGTERM')
    // Until the group is gone (at most 5 s): a process still exiting may yet write in the folder the test removes.
    await waitFor(() => {
      try {
        process.kill(-(child.pid as number), 0)
        return false
      } catch {
        return true
      }
    }, { timeoutMs: 5000, what: 'the walk-through\'s processes to exit' }).catch(() => process.kill(-(child.pid as number), 'SIGKILL'))
  } catch {
    // nothing was left running
  }
  return { status, stdout, stderr }
}

const files = ['README.md', ...readdirSync('docs').filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)]
const withBlocks = files.filter((file) => markedBlocks(readFileSync(file, 'utf8')).length > 0)

describe('walk-throughs of the README and docs/', () => {
  it('the README has one, which reaches an approved run', () => {
    const blocks = markedBlocks(readFileSync('README.md', 'utf8'))
    assert.ok(blocks.length >= 1)
    assert.ok(blocks.some((block) => block.expected?.includes('"status":"succeeded"')))
  })

  for (const file of withBlocks) {
    describe(file, () => {
      let server: ChildServer
      let url: string
      const dir = mkdtempSync(join(tmpdir(), 'tandem-walkthrough-'))
      const databaseUrl = `sqlite:${join(dir, 'tandem.db')}`
      before(async () => {
        server = startServer({ DATABASE_URL: databaseUrl, TANDEM_EGRESS_ALLOW: '127.0.0.0/8' })
        url = await server.url
      })
      after(async () => {
        await server.stop()
        // Retried: a file a process wrote as it exited (Node's compile cache) can land while the folder is removed.
        rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 })
      })

      it('runs every marked block and gets the output shown', async () => {
        const blocks = markedBlocks(readFileSync(file, 'utf8'))
        const separator = (i: number) => `---walkthrough-block-${i}---`
        const npm = `npm() { command npm --prefix ${JSON.stringify(process.cwd())} "$@"; }`
        const script = ['set -u', npm, ...blocks.map((block, i) => `${block.script}\necho '${separator(i)}'`)].join('\n')
        const env = { ...process.env, TANDEM_URL: url, DATABASE_URL: databaseUrl, DEMO_AGENT_PORT: String(await freePort()), TMPDIR: dir }
        const run = await runBash(script, dir, env, 120_000)
        assert.equal(run.status, 0, run.stderr)
        let rest = run.stdout
        blocks.forEach((block, i) => {
          const at = rest.indexOf(separator(i) + '\n')
          assert.notEqual(at, -1, `block at ${file} line ${block.line} ran to its end`)
          const output = rest.slice(0, at).replace(/\n$/, '')
          rest = rest.slice(at + separator(i).length + 1)
          if (block.expected !== undefined) assert.match(output, pattern(block.expected), `block at ${file} line ${block.line}`)
        })
      })
    })
  }
})
