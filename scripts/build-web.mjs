// Builds the console (web/ → web/dist) with Vite when a source under web/ is newer than the last build.
// `npm start` and `npm test` call this; `--force` always builds.
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

const OUTPUT = 'web/dist/index.html'

function newestMtime(path) {
  const stat = statSync(path)
  if (!stat.isDirectory()) return stat.mtimeMs
  let newest = stat.mtimeMs
  for (const entry of readdirSync(path)) {
    if (path === 'web' && entry === 'dist') continue
    newest = Math.max(newest, newestMtime(join(path, entry)))
  }
  return newest
}

export function buildWeb({ force = false } = {}) {
  // A copy of the service without web/ (the build test's) has no console to build.
  if (!existsSync('web/index.html')) return 0
  if (!force && existsSync(OUTPUT) && newestMtime('web') <= statSync(OUTPUT).mtimeMs) return 0
  const build = spawnSync(process.execPath, ['node_modules/vite/bin/vite.js', 'build', '--config', 'web/vite.config.ts', '--logLevel', 'warn'], { stdio: 'inherit' })
  return build.status ?? 1
}

if (import.meta.url === `file://${process.argv[1]}`) process.exit(buildWeb({ force: process.argv.includes('--force') }))
