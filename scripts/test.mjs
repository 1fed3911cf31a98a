// `npm test`: every test/**/*.test.ts through node:test with tsx (Node 20's --test does not expand globs).
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'

// Node 22.14 is the first with Node-API 10, which better-sqlite3 13 needs (older Nodes crash loading it).
const [major, minor] = process.versions.node.split('.').map(Number)
if (major < 22 || (major === 22 && minor < 14)) {
  console.error(`npm test: Node ${process.versions.node} is too old: Tandem needs Node 22.14 or later; see "Node versions" in docs/contributing.md`)
  process.exit(1)
}

const chosen = process.argv.slice(2).filter((arg) => arg.endsWith('.ts'))
const flags = process.argv.slice(2).filter((arg) => !arg.endsWith('.ts'))
const files = chosen.length > 0 ? chosen : readdirSync('test', { recursive: true })
  .map(String)
  .filter((name) => name.endsWith('.test.ts'))
  .map((name) => `test/${name}`)
  .sort()

// The browser tests need the built console (a clean clone has none): build it when web/ is newer.
if (files.some((file) => file.startsWith('test/console/')) && (await import('./build-web.mjs')).buildWeb() !== 0) process.exit(1)

if (!process.env.TANDEM_TEST_POSTGRES_URL) {
  console.log('PostgreSQL suite did not run: set TANDEM_TEST_POSTGRES_URL (e.g. postgres://postgres@127.0.0.1:5432/test) to run it.')
}
const args = ['--import', 'tsx', '--test', '--test-reporter=spec', '--test-concurrency=2', ...flags, ...files]
const run = spawnSync(process.execPath, args, { stdio: 'inherit', env: { LOG_LEVEL: 'silent', ...process.env } })
process.exit(run.status ?? 1)
