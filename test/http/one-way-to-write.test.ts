// One way to write: a route validates, calls a service function inside reply.withTransaction, and
// answers. No file that declares routes opens a transaction of its own (db.transaction()), so an idempotent
// answer is always stored in the transaction of the writes, and every write path goes through one door.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sources(path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}

const ROUTE = /\bapp\.(get|post|put|patch|delete|route)\(/
const OWN_TRANSACTION = /\.transaction\(\)/

describe('one way to write', () => {
  it('no file that declares routes opens a transaction itself', () => {
    const offenders = sources('src')
      .filter((file) => ROUTE.test(readFileSync(file, 'utf8')))
      .flatMap((file) =>
        readFileSync(file, 'utf8')
          .split('\n')
          .map((line, i) => ({ line, at: `${relative('.', file)}:${i + 1}` }))
          .filter(({ line }) => OWN_TRANSACTION.test(line) && !line.trimStart().startsWith('//'))
          .map(({ at }) => at),
      )
    assert.deepEqual(offenders, [], 'routes write through reply.withTransaction and a service function')
  })

  it('finds route files at all (the check is not vacuous)', () => {
    const routeFiles = sources('src').filter((file) => ROUTE.test(readFileSync(file, 'utf8')))
    assert.ok(routeFiles.some((file) => file.endsWith(join('runs', 'routes.ts'))))
    assert.ok(routeFiles.some((file) => file.endsWith(join('webhooks', 'routes.ts'))))
  })
})
