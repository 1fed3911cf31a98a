// The docs stand alone: every file README.md and docs/*.md cite (in a link, in `code` or in prose) is in the
// repository, and none cites a place a reader of the repository does not have (a sibling folder such as
// ../shared, a numbered section of an outside spec, an issue number).
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, normalize } from 'node:path'

const docs = ['README.md', ...readdirSync('docs').filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)]
const tracked = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { encoding: 'utf8' }).split('\n').filter(Boolean)
// Made by a build, a test or the reader, not kept in the repository.
const MADE = /^(web\/dist|dist|test-results|node_modules|bench\/results|\.env$|data\/|tandem\.db)/
const FILE = /(?<![\w@/.<>{}*$-])((?:\.{1,2}\/)?[\w-][\w.-]*(?:\/[\w.-]+)*\.(?:md|ts|tsx|mjs|cjs|js|json|ya?ml|sh|sql|png|html|css))(?![\w/-])/g

/** Where a cited path can be: from the repository's root, beside the doc, or the tail of a tracked path. */
function found(path: string, doc: string): boolean {
  const clean = path.replace(/^\.\//, '')
  if (MADE.test(clean)) return true
  if (existsSync(clean) || existsSync(normalize(join(dirname(doc), clean)))) return true
  if (clean.startsWith('../')) return false
  return tracked.some((file) => file === clean || file.endsWith(`/${clean}`))
}

export function citedFiles(markdown: string): string[] {
  // URLs name other sites' files; a placeholder (`<name>.md`, `{id}`) names none; a file a shell example writes
  // (`cat > name <<`) is the reader's.
  const written = new Set([...markdown.matchAll(/cat > ([\w.-]+) <</g)].map((m) => m[1]))
  const text = markdown.replace(/https?:\/\/\S+/g, ' ')
  return [...new Set([...text.matchAll(FILE)].map((m) => m[1] as string))].filter((path) => !written.has(path))
}

describe('the docs stand alone', () => {
  it('finds cited files in links, code and prose', () => {
    assert.deepEqual(citedFiles('See [x](operators.md), `src/app.ts`, RUNS.md and https://example.com/a.md.'), ['operators.md', 'src/app.ts', 'RUNS.md'])
  })

  for (const doc of docs) {
    it(`${doc}: every cited file is in the repository; no outside section or issue numbers`, () => {
      const text = readFileSync(doc, 'utf8')
      const missing = citedFiles(text).filter((path) => !found(path, doc))
      assert.deepEqual(missing, [], `${doc} cites files that are not in the repository`)
      const outside = [...text.matchAll(/\.\.\/shared|\b[Ss]pec \d+(\.\d+)*|\b[Ii]ssue #?\d+/g)].map((m) => m[0])
      assert.deepEqual(outside, [], `${doc} cites places outside the repository`)
    })
  }
})
