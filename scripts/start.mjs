// `npm start`: compile when the sources are newer than dist/, then run the server.
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

function newestMtime(dir) {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs)
  }
  return newest
}

const entry = 'dist/main.js'
if (!existsSync(entry) || newestMtime('src') > statSync(entry).mtimeMs) {
  const build = spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' })
  if (build.status !== 0) process.exit(build.status ?? 1)
}
// The console (web/ → web/dist), rebuilt only when its sources are newer: scripts/build-web.mjs.
if ((await import('./build-web.mjs')).buildWeb() !== 0) process.exit(1)
await import('../dist/main.js')
