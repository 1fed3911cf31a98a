// Configuration: defaults, and one clear line naming the variable for every bad value.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig, parseDrafter } from '../src/config.js'
import { loadDotEnv } from '../src/dotenv.js'

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
      peerRateLimit: null,
      corsOrigins: null,
      requestTimeoutMs: 120000,
      maxConnections: 1024,
      maxStreamsPerKey: 128,
      maxStreamsPerPeer: 256,
      sseMaxLifetimeMs: 3600000,
      mcpSessionIdleMs: 86400000,
      a2aWaitMs: 60000,
      logLevel: 'info',
      eventRetentionDays: 7,
      insightsFoldMs: 1000,
      sseKeepAliveMs: 15000,
      sseMaxBufferBytes: 1048576,
      webhookRetryBaseMs: 5000,
      webhookTimeoutMs: 10000,
      workers: 8,
      failoverMs: 60000,
      runs: { publicUrl: null, taskLeaseS: 300, taskTimeoutS: 3600, dispatchTimeoutMs: 30000, dispatchAttempts: 5, pollIntervalMs: 10000 },
      operators: { claimTtlS: 900, hookRateLimit: { max: 120, windowMs: 60000 }, maxEnabledSchedules: 200, scheduleFiringsPerMinute: 120 },
      egressAllow: [],
      secretKey: null,
      secretKeysPrevious: [],
      accessLog: false,
      metricsToken: null,
      metricsAgentLabels: 100,
      tracing: null,
      redisUrl: null,
      assetMaxBytes: 1048576,
      toolTimeoutMs: 30000,
      toolSteps: 16,
    })
  })

  it('limits the rate by default only where keys are required', () => {
    assert.deepEqual(loadConfig({ HOST: '0.0.0.0' }).rateLimit, { max: 1200, windowMs: 60000 })
    assert.deepEqual(loadConfig({ TANDEM_RATE_LIMIT: '5/second' }).rateLimit, { max: 5, windowMs: 1000 })
    assert.equal(loadConfig({ HOST: '0.0.0.0', TANDEM_RATE_LIMIT: 'off' }).rateLimit, null)
    assert.deepEqual(loadConfig({ TANDEM_AUTH: 'required', TANDEM_CORS_ORIGINS: 'https://a.example, http://localhost:5173' }).corsOrigins, ['https://a.example', 'http://localhost:5173'])
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
      [{ TANDEM_DRAFTER: 'anthropic:claude-x' }, /^ANTHROPIC_API_KEY: is required when TANDEM_DRAFTER is anthropic:<model>/],
      [{ TANDEM_DRAFTER: 'anthropic:claude-x', ANTHROPIC_API_KEY: ' ' }, /^ANTHROPIC_API_KEY: is required/],
      [{ TANDEM_DRAFTER: 'mistral:m', ANTHROPIC_API_KEY: 'k' }, /^MISTRAL_API_KEY: is required when TANDEM_DRAFTER is mistral:<model>/],
      [{ TANDEM_DRAFTER: 'openai-compatible:ftp://x#m' }, /^TANDEM_DRAFTER: /],
      [{ TANDEM_DRAFTER_TIMEOUT_MS: '0' }, /^TANDEM_DRAFTER_TIMEOUT_MS: /],
      [{ LOG_LEVEL: 'loud' }, /^LOG_LEVEL: /],
      [{ TANDEM_RATE_LIMIT: 'lots' }, /^TANDEM_RATE_LIMIT: /],
      [{ TANDEM_RATE_LIMIT: '0/minute' }, /^TANDEM_RATE_LIMIT: /],
      [{ TANDEM_CORS_ORIGINS: 'example.com' }, /^TANDEM_CORS_ORIGINS: /],
      [{ TANDEM_CORS_ORIGINS: 'https://a.example/path' }, /^TANDEM_CORS_ORIGINS: /],
      [{ TANDEM_REQUEST_TIMEOUT_MS: '5' }, /^TANDEM_REQUEST_TIMEOUT_MS: /],
      [{ TANDEM_FAILOVER_S: '2' }, /^TANDEM_FAILOVER_S: /],
      [{ TANDEM_PEER_RATE_LIMIT: 'many' }, /^TANDEM_PEER_RATE_LIMIT: /],
      [{ TANDEM_MAX_CONNECTIONS: '0' }, /^TANDEM_MAX_CONNECTIONS: /],
      [{ TANDEM_TOOL_TIMEOUT_MS: '0' }, /^TANDEM_TOOL_TIMEOUT_MS: /],
      [{ TANDEM_TOOL_TIMEOUT_MS: '600001' }, /^TANDEM_TOOL_TIMEOUT_MS: /],
    ]
    for (const [env, message] of cases) assert.throws(() => loadConfig(env), { message }, JSON.stringify(env))
  })

  it('refuses CORS origins in local mode (a browser origin is not the local user)', () => {
    assert.throws(() => loadConfig({ TANDEM_CORS_ORIGINS: 'https://app.example' }), { message: /^TANDEM_CORS_ORIGINS: cannot be set with TANDEM_AUTH=local/ })
    assert.throws(() => loadConfig({ TANDEM_AUTH: 'local', HOST: '0.0.0.0', TANDEM_CORS_ORIGINS: '*' }), { message: /^TANDEM_CORS_ORIGINS: / })
    assert.deepEqual(loadConfig({ HOST: '0.0.0.0', TANDEM_CORS_ORIGINS: '*' }).corsOrigins, ['*'])
  })

  it('counts requests per peer with the per-key budget unless told otherwise', () => {
    assert.deepEqual(loadConfig({ HOST: '0.0.0.0' }).peerRateLimit, { max: 1200, windowMs: 60000 })
    assert.deepEqual(loadConfig({ HOST: '0.0.0.0', TANDEM_PEER_RATE_LIMIT: '100/second' }).peerRateLimit, { max: 100, windowMs: 1000 })
    assert.equal(loadConfig({ HOST: '0.0.0.0', TANDEM_PEER_RATE_LIMIT: 'off' }).peerRateLimit, null)
  })

  it('never echoes the password of a bad DATABASE_URL', () => {
    for (const url of ['postgres://tandem:s3cret-pw@db.internal:notaport/tandem', 'postgresql://u:s3cret-pw@[::1', 'mysql://root:s3cret-pw@host/db', 'postgres://u:s3cret/pw@x@h:99999/db']) {
      assert.throws(() => loadConfig({ DATABASE_URL: url }), (error: Error) => {
        assert.match(error.message, /^DATABASE_URL: /)
        assert.doesNotMatch(error.message, /s3cret/, error.message)
        assert.match(error.message, /:\/\/\*\*\*@/)
        return true
      })
    }
  })

  it('reads .env without overriding the environment', () => {
    const file = join(tmpdir(), `tandem-env-${process.pid}`)
    writeFileSync(file, 'TANDEM_TEST_FROM_FILE=file\nTANDEM_TEST_BOTH=file\n')
    process.env.TANDEM_TEST_BOTH = 'environment'
    try {
      loadDotEnv(file)
      assert.equal(process.env.TANDEM_TEST_FROM_FILE, 'file')
      assert.equal(process.env.TANDEM_TEST_BOTH, 'environment')
      loadDotEnv(join(tmpdir(), 'no-such-env-file'))
    } finally {
      delete process.env.TANDEM_TEST_FROM_FILE
      delete process.env.TANDEM_TEST_BOTH
      rmSync(file, { force: true })
    }
  })

  it('starts a model drafter once its key is set (a local OpenAI-compatible server needs none)', () => {
    assert.equal(loadConfig({ TANDEM_DRAFTER: 'anthropic:claude-x', ANTHROPIC_API_KEY: 'k' }).drafter.kind, 'anthropic')
    assert.equal(loadConfig({ TANDEM_DRAFTER: 'openai-compatible:http://127.0.0.1:11434/v1#m' }).drafter.kind, 'openai-compatible')
  })
})
