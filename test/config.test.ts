// Configuration: defaults, and one clear line naming the variable for every bad value.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { loadConfig, parseDrafter } from '../src/config.js'

describe('configuration', () => {
  it('has the documented defaults', () => {
    assert.deepEqual(loadConfig({}), {
      port: 3000,
      host: '127.0.0.1',
      databaseUrl: 'sqlite:./data/tandem.db',
      auth: 'local',
      drafter: { kind: 'builtin' },
      drafterTimeoutMs: 30000,
      logLevel: 'info',
    })
  })

  it('requires keys by default when bound beyond loopback', () => {
    assert.equal(loadConfig({ HOST: '0.0.0.0' }).auth, 'required')
    assert.equal(loadConfig({ HOST: '::1' }).auth, 'local')
    assert.equal(loadConfig({ HOST: '0.0.0.0', TANDEM_AUTH: 'local' }).auth, 'local')
  })

  it('parses every drafter form', () => {
    assert.deepEqual(parseDrafter('anthropic:claude-sonnet-4-5'), { kind: 'anthropic', model: 'claude-sonnet-4-5' })
    assert.deepEqual(parseDrafter('mistral:mistral-large-latest'), { kind: 'mistral', model: 'mistral-large-latest' })
    assert.deepEqual(parseDrafter('openai-compatible:http://127.0.0.1:11434/v1#llama3.1:8b'), {
      kind: 'openai-compatible',
      baseURL: 'http://127.0.0.1:11434/v1',
      model: 'llama3.1:8b',
    })
  })

  it('names the variable of each bad value', () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ PORT: 'abc' }, /^PORT: /],
      [{ PORT: '70000' }, /^PORT: /],
      [{ DATABASE_URL: 'mysql://x' }, /^DATABASE_URL: /],
      [{ DATABASE_URL: 'sqlite:' }, /^DATABASE_URL: /],
      [{ TANDEM_AUTH: 'none' }, /^TANDEM_AUTH: /],
      [{ TANDEM_DRAFTER: 'gpt' }, /^TANDEM_DRAFTER: /],
      [{ TANDEM_DRAFTER: 'anthropic:' }, /^TANDEM_DRAFTER: /],
      [{ TANDEM_DRAFTER: 'openai-compatible:ftp://x#m' }, /^TANDEM_DRAFTER: /],
      [{ TANDEM_DRAFTER_TIMEOUT_MS: '0' }, /^TANDEM_DRAFTER_TIMEOUT_MS: /],
      [{ LOG_LEVEL: 'loud' }, /^LOG_LEVEL: /],
    ]
    for (const [env, message] of cases) assert.throws(() => loadConfig(env), { message }, JSON.stringify(env))
  })
})
