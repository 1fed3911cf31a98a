// How Tandem serves the console: index.html on the SPA's routes, hashed assets cached for a year, a strict
// CSP, the API's own answers untouched; the first load (JavaScript and CSS) within budget; the client types current.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { gzipSync } from 'node:zlib'
import { parse } from 'parse5'
import { build, dialects } from '../helpers.js'
import { CONSOLE_DIR } from '../../src/console/routes.js'
import { generateSchemaTypes, SCHEMA_FILE } from '../../scripts/openapi-types.js'

const FIRST_LOAD_BUDGET = 250 * 1024

interface Element { nodeName: string; attrs?: Array<{ name: string; value: string }>; childNodes?: Element[]; value?: string }
function elements(node: Element): Element[] {
  return [node, ...(node.childNodes ?? []).flatMap(elements)]
}
const attr = (el: Element, name: string) => el.attrs?.find((a) => a.name === name)?.value

const indexHtml = readFileSync(`${CONSOLE_DIR}index.html`, 'utf8')
const indexElements = elements(parse(indexHtml) as unknown as Element)
/** What the browser fetches to start: the entry script, preloaded modules and stylesheets. */
const firstLoad = indexElements
  .filter((el) => (el.nodeName === 'script' && attr(el, 'src')) || (el.nodeName === 'link' && ['modulepreload', 'stylesheet'].includes(attr(el, 'rel') ?? '')))
  .map((el) => attr(el, 'src') ?? (attr(el, 'href') as string))

test('the first load fetches only same-origin files and no inline script or style', () => {
  assert.ok(firstLoad.some((url) => url.endsWith('.js')))
  for (const url of firstLoad) assert.match(url, /^\/assets\/[\w-]+\.(js|css)$/)
  for (const el of indexElements) {
    if (el.nodeName === 'script') assert.ok(attr(el, 'src'), 'inline <script>')
    assert.notEqual(el.nodeName, 'style', 'inline <style>')
    assert.equal(attr(el, 'style'), undefined, 'style attribute')
    for (const a of el.attrs ?? []) assert.doesNotMatch(a.value, /^(https?:)?\/\//, `${el.nodeName} ${a.name} points at another origin`)
  }
})

test(`the first load (JavaScript and stylesheets) is at most ${FIRST_LOAD_BUDGET / 1024} KB gzipped`, () => {
  const size = (url: string) => gzipSync(readFileSync(`${CONSOLE_DIR}${url.slice(1)}`), { level: 9 }).length
  const js = firstLoad.filter((url) => url.endsWith('.js')).reduce((sum, url) => sum + size(url), 0)
  const css = firstLoad.filter((url) => url.endsWith('.css')).reduce((sum, url) => sum + size(url), 0)
  console.log(`console first load: ${((js + css) / 1024).toFixed(1)} KB gzipped (JavaScript ${(js / 1024).toFixed(1)} KB, CSS ${(css / 1024).toFixed(1)} KB)`)
  assert.ok(css > 0, 'the stylesheet is part of the first load')
  assert.ok(js + css <= FIRST_LOAD_BUDGET, `${js + css} bytes`)
})

test(`${SCHEMA_FILE} is generated from the current /openapi.json (npm run gen:api)`, async () => {
  assert.equal(readFileSync(SCHEMA_FILE, 'utf8'), await generateSchemaTypes())
})

for (const dialect of dialects()) {
  test(`serving the console (${dialect})`, async (t) => {
    const app = await build(dialect)
    t.after(() => app.close())

    await t.test('the SPA routes answer index.html with a strict CSP, revalidated on every load', async () => {
      for (const url of ['/', '/streams/01890a5d-ac96-774b-bcce-b302099a8057', '/agents', '/credentials', '/inbox', '/agents?x=1']) {
        const res = await app.inject({ method: 'GET', url })
        assert.equal(res.statusCode, 200, url)
        assert.match(res.headers['content-type'] as string, /^text\/html/)
        assert.equal(res.body, indexHtml)
        assert.equal(res.headers['cache-control'], 'no-cache')
        const csp = res.headers['content-security-policy'] as string
        assert.match(csp, /default-src 'self'/)
        assert.match(csp, /script-src 'self'(;|$)/)
        assert.match(csp, /style-src 'self'(;|$)/)
        // Avatars come from blob: URLs of this origin's own fetches; no other image source.
        assert.match(csp, /img-src 'self' data: blob:(;|$)/)
        assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:|\*/)
        assert.equal(res.headers['x-content-type-options'], 'nosniff')
      }
      const head = await app.inject({ method: 'HEAD', url: '/agents' })
      assert.equal(head.statusCode, 200)
    })

    await t.test('hashed assets are cached for a year; a missing one is a 404 problem', async () => {
      for (const url of firstLoad) {
        const res = await app.inject({ method: 'GET', url })
        assert.equal(res.statusCode, 200, url)
        assert.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable')
        assert.match(res.headers['content-type'] as string, url.endsWith('.js') ? /javascript/ : /text\/css/)
        assert.ok(res.headers['content-security-policy'])
      }
      const missing = await app.inject({ method: 'GET', url: '/assets/nothing-here.js' })
      assert.equal(missing.statusCode, 404)
      assert.equal(missing.json().type, 'urn:tandem:problem:not-found')
      const escape = await app.inject({ method: 'GET', url: '/assets/../../package.json' })
      assert.notEqual(escape.statusCode, 200)
      const icon = await app.inject({ method: 'GET', url: '/favicon.svg' })
      assert.equal(icon.statusCode, 200)
      assert.equal(icon.headers['cache-control'], 'no-cache')
    })

    await t.test('the API, its documents and health keep their own answers', async () => {
      const unknownApi = await app.inject({ method: 'GET', url: '/api/nothing' })
      assert.equal(unknownApi.statusCode, 404)
      assert.match(unknownApi.headers['content-type'] as string, /^application\/problem\+json/)
      assert.equal(unknownApi.json().type, 'urn:tandem:problem:not-found')
      const streams = await app.inject({ method: 'GET', url: '/api/streams' })
      assert.equal(streams.statusCode, 200)
      assert.deepEqual(streams.json().data, [])
      assert.equal(streams.headers['content-security-policy'], undefined)
      const openapi = await app.inject({ method: 'GET', url: '/openapi.json' })
      assert.equal(openapi.json().openapi, '3.1.0')
      const docs = await app.inject({ method: 'GET', url: '/docs/' })
      assert.notEqual(docs.body, indexHtml)
      assert.equal((await app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200)
      const metrics = await app.inject({ method: 'GET', url: '/metrics' })
      assert.notEqual(metrics.body, indexHtml)
      // Other paths are not the console's: a JSON 404, not index.html.
      const other = await app.inject({ method: 'GET', url: '/nowhere' })
      assert.equal(other.statusCode, 404)
      assert.equal(other.json().type, 'urn:tandem:problem:not-found')
      const post = await app.inject({ method: 'POST', url: '/agents' })
      assert.equal(post.statusCode, 405)
    })
  })
}
