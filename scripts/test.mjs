// `npm test`: every test/**/*.test.ts through node:test, TypeScript loaded as typescript-loader.mjs says (Node's own
// type stripping where the Node line has it, else tsx).
//
// Two lanes run side by side. The main lane runs as many files at a time as the machine has cores
// (os.availableParallelism(); each file has its own database). The clock lane holds the files marked
// `// test lane: clock` near their top: tests that kill and restart server processes or must wait on the real
// clock (a cron tick, a retry's back-off). They wait most of the time, so they run beside the main lane, two at a
// time, where their timing is not squeezed by each other. `--lane=main` or `--lane=clock` runs one lane;
// TANDEM_TEST_CONCURRENCY and TANDEM_TEST_CLOCK_CONCURRENCY override each lane's files at a time.
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { TYPESCRIPT_LOADER } from './typescript-loader.mjs'

// Node 22.14 is the first with Node-API 10, which better-sqlite3 13 needs (older Nodes crash loading it).
const [major, minor] = process.versions.node.split('.').map(Number)
if (major < 22 || (major === 22 && minor < 14)) {
  console.error(`npm test: Node ${process.versions.node} is too old: Tandem needs Node 22.14 or later; see "Node versions" in docs/contributing.md`)
  process.exit(1)
}

const argv = process.argv.slice(2)
const lane = argv.find((arg) => arg.startsWith('--lane='))?.slice('--lane='.length) ?? 'all'
if (!['all', 'main', 'clock'].includes(lane)) {
  console.error(`npm test: --lane is main, clock or all, not ${lane}`)
  process.exit(1)
}
const chosen = argv.filter((arg) => arg.endsWith('.ts'))
const flags = argv.filter((arg) => !arg.endsWith('.ts') && !arg.startsWith('--lane='))
const files = chosen.length > 0 ? chosen : readdirSync('test', { recursive: true })
  .map(String)
  .filter((name) => name.endsWith('.test.ts'))
  .map((name) => `test/${name}`)
  .sort()

/** The files of the clock lane: the marker in the first 2,000 characters (the header comment). */
const CLOCK_LANE_MARKER = /^\/\/ test lane: clock\b/m
const inClockLane = (file) => CLOCK_LANE_MARKER.test(readFileSync(file, 'utf8').slice(0, 2000))
const lanes = [
  { name: 'main', files: files.filter((file) => !inClockLane(file)), concurrency: Number(process.env.TANDEM_TEST_CONCURRENCY) || Math.max(2, availableParallelism()) },
  { name: 'clock', files: files.filter(inClockLane), concurrency: Number(process.env.TANDEM_TEST_CLOCK_CONCURRENCY) || 2 },
].filter((l) => l.files.length > 0 && (lane === 'all' || lane === l.name))

// The browser tests need the built console (a clean clone has none): build it when web/ is newer.
if (lanes.some((l) => l.files.some((file) => file.startsWith('test/console/'))) && (await import('./build-web.mjs')).buildWeb() !== 0) process.exit(1)

if (!process.env.TANDEM_TEST_POSTGRES_URL) {
  console.log('PostgreSQL suite did not run: set TANDEM_TEST_POSTGRES_URL (e.g. postgres://postgres@127.0.0.1:5432/test) to run it.')
} else if (process.env.TANDEM_TEST_DIALECT) {
  console.log(`Each database's tests run on ${process.env.TANDEM_TEST_DIALECT} only (TANDEM_TEST_DIALECT).`)
}

// What the spec reporter prints when anything failed, a hook included. Node 22's runner exits 0 when only a suite's
// hook (an `after`) failed; Node 24's exits 1. A lane whose output says so fails on every line.
const FAILED_MARKER = '✖ failing tests:'

/** One lane's node --test; the first lane writes straight through, a second one's output is kept and shown after. */
function runLane({ name, files: laneFiles, concurrency }, live) {
  const started = Date.now()
  const args = [...TYPESCRIPT_LOADER, '--test', '--test-reporter=spec', `--test-concurrency=${concurrency}`, ...flags, ...laneFiles]
  // Piped (to be read), so colours are asked for when a person watches.
  const colour = process.stdout.isTTY && process.env.FORCE_COLOR === undefined && process.env.NO_COLOR === undefined ? { FORCE_COLOR: '1' } : {}
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { LOG_LEVEL: 'silent', ...colour, ...process.env } })
  const kept = []
  let tail = ''
  let failed = false
  const take = (stream) => (chunk) => {
    if (live) stream.write(chunk)
    else kept.push(chunk)
    const text = tail + chunk.toString('utf8')
    if (text.includes(FAILED_MARKER)) failed = true
    tail = text.slice(-FAILED_MARKER.length)
  }
  child.stdout.on('data', take(process.stdout))
  child.stderr.on('data', take(process.stderr))
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      const exit = code ?? (signal ? 1 : 0)
      resolve({ name, count: laneFiles.length, concurrency, code: exit === 0 && failed ? 1 : exit, seconds: (Date.now() - started) / 1000, output: Buffer.concat(kept) })
    })
  })
}

const results = await Promise.all(lanes.map((l, i) => runLane(l, i === 0)))
for (const result of results.slice(1)) {
  console.log(`\n== the ${result.name} lane's output`)
  process.stdout.write(result.output)
}
if (results.length > 1 || lane !== 'all') {
  for (const r of results) console.log(`npm test: the ${r.name} lane, ${r.count} files, ${r.concurrency} at a time: ${r.code === 0 ? 'passed' : 'FAILED'} in ${r.seconds.toFixed(0)} s`)
}
process.exit(results.every((r) => r.code === 0) ? 0 : 1)
