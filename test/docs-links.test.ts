// Every relative link of README.md and docs/*.md leads somewhere: the file exists, and a `#fragment` into a
// Markdown file names one of its headings (GitHub's anchors: lower case, punctuation dropped, spaces to
// hyphens, `-1`, `-2` … for repeated headings). Links to other sites are not followed (no network in tests).
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, normalize } from 'node:path'

const files = ['README.md', ...readdirSync('docs').filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)]

/** The text outside fenced code blocks (a link inside ``` is an example, not a link). */
function prose(markdown: string): string {
  return markdown.replace(/^```[^\n]*\n[\s\S]*?^```[ \t]*$/gm, '')
}

export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>()
  const result = new Set<string>()
  for (const match of prose(markdown).matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const text = (match[1] as string).replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    const slug = text.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-')
    const count = seen.get(slug) ?? 0
    seen.set(slug, count + 1)
    result.add(count === 0 ? slug : `${slug}-${count}`)
  }
  return result
}

function links(markdown: string): string[] {
  const text = prose(markdown).replace(/`[^`\n]*`/g, '')
  return [...text.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1] as string)
}

describe('relative links in README.md and docs/', () => {
  it('the slugs follow GitHub', () => {
    assert.deepEqual([...anchors('# Runs\n## Runs\n### `custom_webhook` delivery\n## Authentication and workspaces\n')], ['runs', 'runs-1', 'custom_webhook-delivery', 'authentication-and-workspaces'])
  })

  for (const file of files) {
    it(`${file}: every relative link and anchor resolves`, () => {
      const broken: string[] = []
      for (const link of links(readFileSync(file, 'utf8'))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue // http:, https:, mailto:
        const [path, fragment] = link.split('#') as [string, string | undefined]
        const target = path === '' ? file : normalize(join(dirname(file), decodeURIComponent(path)))
        if (!existsSync(target)) {
          broken.push(`${link} (no ${target})`)
          continue
        }
        if (fragment && target.endsWith('.md') && !anchors(readFileSync(target, 'utf8')).has(fragment)) broken.push(`${link} (no heading #${fragment} in ${target})`)
      }
      assert.deepEqual(broken, [])
    })
  }
})
