// `npm start`: compile when anything the build reads is newer than dist/ (sources, tsconfig*.json, the lock
// file), then run the server in this very process, so a signal sent to it reaches the server. A failed
// build stops here with tsc's exit code: the output of a failed build is never run (tsc emits nothing on
// error, and a stale dist/ is not started either). `npm start -- --help` prints the settings without building.
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'

function newestMtime(path) {
  if (!existsSync(path)) return 0
  const stat = statSync(path)
  if (!stat.isDirectory()) return stat.mtimeMs
  let newest = 0
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)))
  return newest
}

// Node 22.14 is the first with Node-API 10, which better-sqlite3 13 needs (older Nodes crash loading it).
const [major, minor] = process.versions.node.split('.').map(Number)
if (major < 22 || (major === 22 && minor < 14)) {
  console.error(`tandem: Node ${process.versions.node} is too old: Tandem needs Node 22.14 or later (24 is the current LTS); see "Node versions" in README.md`)
  process.exit(1)
}

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  // From the sources through tsx (a dev dependency), so help needs no build; without tsx, dist/main.js answers.
  const help = await import('tsx/esm/api').then(({ tsImport }) => tsImport('../src/help.ts', import.meta.url)).catch(() => null)
  if (help) {
    console.log(help.helpText())
    process.exit(0)
  }
}

const entry = 'dist/main.js'
const inputs = ['src', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json']
const newestInput = Math.max(...inputs.map(newestMtime))
if (!existsSync(entry) || newestInput > statSync(entry).mtimeMs) {
  console.log('tandem: building… (first start takes about half a minute)')
  // Built from scratch: nothing of an earlier build can survive a failed one.
  rmSync('dist', { recursive: true, force: true })
  const tsc = join('node_modules', 'typescript', 'bin', 'tsc')
  const build = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { stdio: 'inherit' })
  if (build.status !== 0) {
    console.error('tandem: the build failed (see above); not starting.')
    process.exit(build.status ?? 1)
  }
}
// The console (web/ → web/dist), rebuilt only when its sources are newer: scripts/build-web.mjs.
if ((await import('./build-web.mjs')).buildWeb() !== 0) process.exit(1)
// Under npm the script's shell execs this process (`exec node …`), so npm is our parent; npm does not pass
// SIGTERM on, so when it goes away (`npm start &` then `kill $!`) the server shuts down gracefully too.
if (process.env.npm_lifecycle_event === 'start') {
  const parent = process.ppid
  setInterval(() => {
    if (process.ppid !== parent) process.kill(process.pid, 'SIGTERM')
  }, 250).unref()
}
await import('../dist/main.js')
