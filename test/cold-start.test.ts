// What a cold start loads: building the app imports no vendor SDK, no MCP SDK, no NLP lexicon, no undici and no
// Redis client. Each of those loads at its first use (a model call, an MCP call, a draft, an outgoing request, a
// Redis URL); together they were over half of the modules a start loaded, paid again by every test file and
// every child server of the suite.
import { it } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

const LOADED_AT_FIRST_USE = ['ai', '@ai-sdk/anthropic', '@ai-sdk/mistral', '@ai-sdk/openai-compatible', '@modelcontextprotocol/sdk', 'compromise', 'undici', 'ioredis']

it('building the app loads none of the packages that load at their first use', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-cold-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'loaded.txt')
  const register = `import { register } from 'node:module'; register(${JSON.stringify(pathToFileURL('test/cold-start-hooks.mjs').href)}, { data: { file: ${JSON.stringify(file)} } })`
  const script = "const { buildApp } = await import('./src/app.ts'); const { loadConfig } = await import('./src/config.ts'); const app = await buildApp(loadConfig({ LOG_LEVEL: 'silent', DATABASE_URL: 'sqlite::memory:', TANDEM_SECRET_KEY: process.env.TANDEM_SECRET_KEY })); await app.ready(); await app.close()"
  const run = spawnSync(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(register)}`, '--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', env: { ...process.env, TANDEM_SECRET_KEY: Buffer.alloc(32, 7).toString('base64') } })
  assert.equal(run.status, 0, run.stderr)
  const urls = readFileSync(file, 'utf8').split('\n')
  assert.ok(urls.some((url) => url.includes('/node_modules/fastify/')), 'the hooks saw the app load')
  const loaded = LOADED_AT_FIRST_USE.filter((name) => urls.some((url) => url.includes(`/node_modules/${name}/`)))
  assert.deepEqual(loaded, [], 'loaded at start-up, though they load at first use')
})
