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
      rateLimit: null,
      corsOrigins: null,
      requestTimeoutMs: 120000,
      logLevel: 'info',
      eventRetentionDays: 7,
      sseKeepAliveMs: 15000,
      sseMaxBufferBytes: 1048576,
      webhookRetryBaseMs: 5000,
      workers: 8,
      runs: { publicUrl: null, taskLeaseS: 300, taskTimeoutS: 3600, dispatchTimeoutMs: 30000, dispatchAttempts: 5, pollIntervalMs: 10000 },
      egressAllow: [],
      secretKey: null,
      secretKeysPrevious: [],
    })
  })

  it('limits the rate by default only where keys are required', () => {
    assert.deepEqual(loadConfig({ HOST: '0.0.0.0' }).rateLimit, { max: 1200, windowMs: 60000 })
    assert.deepEqual(loadConfig({ TANDEM_RATE_LIMIT: '5/second' }).rateLimit, { max: 5, windowMs: 1000 })
    assert.equal(loadConfig({ HOST: '0.0.0.0', TANDEM_RATE_LIMIT: 'off' }).rateLimit, null)
    assert.deepEqual(loadConfig({ TANDEM_CORS_ORIGINS: 'https://a.example, http://localhost:5173' }).corsOrigins, ['https://a.example', 'http://localhost:5173'])
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
      [{ TANDEM_RATE_LIMIT: 'lots' }, /^TANDEM_RATE_LIMIT: /],
      [{ TANDEM_RATE_LIMIT: '0/minute' }, /^TANDEM_RATE_LIMIT: /],
      [{ TANDEM_CORS_ORIGINS: 'example.com' }, /^TANDEM_CORS_ORIGINS: /],
      [{ TANDEM_CORS_ORIGINS: 'https://a.example/path' }, /^TANDEM_CORS_ORIGINS: /],
      [{ TANDEM_REQUEST_TIMEOUT_MS: '5' }, /^TANDEM_REQUEST_TIMEOUT_MS: /],
    ]
    for (const [env, message] of cases) assert.throws(() => loadConfig(env), { message }, JSON.stringify(env))
  })
})
