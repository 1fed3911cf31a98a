// Environment → typed configuration. A bad value stops start-up with one line naming the variable.
import { isIP } from 'node:net'
import { parseCidr } from './runs/egress.js'

export type AuthMode = 'local' | 'required'

export type DrafterConfig =
  | { kind: 'builtin' }
  | { kind: 'anthropic'; model: string }
  | { kind: 'mistral'; model: string }
  | { kind: 'openai-compatible'; baseURL: string; model: string }

export interface RateLimit {
  max: number
  windowMs: number
}

export interface Config {
  port: number
  host: string
  databaseUrl: string
  auth: AuthMode
  drafter: DrafterConfig
  drafterTimeoutMs: number
  /** Requests per key (per peer address without one) and window; null when off. */
  rateLimit: RateLimit | null
  /** Origins allowed to call from a browser; null: CORS off. */
  corsOrigins: string[] | null
  requestTimeoutMs: number
  logLevel: string
  /** Events older than this many days are purged (an `after` before them is a 410). */
  eventRetentionDays: number
  /** How often an open event stream gets a `: keep-alive` comment. */
  sseKeepAliveMs: number
  /** An event stream whose unsent output passes this many bytes is dropped (the client resumes). */
  sseMaxBufferBytes: number
  /** The first webhook retry waits this long; each next one 4× longer. */
  webhookRetryBaseMs: number
  /** TANDEM_WORKERS: background jobs (deliveries, time-outs, polls) this instance runs at once; 0: none. */
  workers: number
  runs: RunsConfig
  /** CIDRs outgoing calls to user-given addresses may reach besides public unicast (TANDEM_EGRESS_ALLOW). */
  egressAllow: string[]
  /** TANDEM_SECRET_KEY: the vault key (null: SQLite's secret.key file, or a per-process key for sqlite::memory:). */
  secretKey: Buffer | null
  /** TANDEM_SECRET_KEY_PREVIOUS (comma-separated): keys that still decrypt during a rotation. */
  secretKeysPrevious: Buffer[]
}

/** The run engine's settings (README "Runs"). */
export interface RunsConfig {
  /** Base of the `result.url` handed to agents; null: the listening URL. */
  publicUrl: string | null
  taskLeaseS: number
  taskTimeoutS: number
  dispatchTimeoutMs: number
  dispatchAttempts: number
  pollIntervalMs: number
}

export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`${variable}: ${problem}`)
    this.name = 'ConfigError'
  }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

export function isLoopbackHost(host: string): boolean {
  if (host === 'localhost') return true
  if (isIP(host) === 4) return host.startsWith('127.')
  return host === '::1'
}

function parseInteger(variable: string, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(variable, `must be a whole number from ${min} to ${max}, got "${raw}"`)
  }
  return Number(raw)
}

function parseDatabaseUrl(raw: string): string {
  if (raw.startsWith('sqlite:') && raw.length > 'sqlite:'.length) return raw
  if (/^postgres(ql)?:\/\//.test(raw) && URL.canParse(raw)) return raw
  throw new ConfigError('DATABASE_URL', `must be sqlite:<path>, sqlite::memory: or postgres://user:pass@host:port/db, got "${raw}"`)
}

export function parseDrafter(raw: string): DrafterConfig {
  if (raw === 'builtin') return { kind: 'builtin' }
  const colon = raw.indexOf(':')
  const kind = colon === -1 ? raw : raw.slice(0, colon)
  const rest = colon === -1 ? '' : raw.slice(colon + 1)
  if ((kind === 'anthropic' || kind === 'mistral') && rest.length > 0) return { kind, model: rest }
  if (kind === 'openai-compatible') {
    const hash = rest.lastIndexOf('#')
    const baseURL = hash === -1 ? '' : rest.slice(0, hash)
    const model = hash === -1 ? '' : rest.slice(hash + 1)
    if (/^https?:\/\//.test(baseURL) && URL.canParse(baseURL) && model.length > 0) return { kind, baseURL, model }
  }
  throw new ConfigError(
    'TANDEM_DRAFTER',
    `must be builtin, anthropic:<model>, mistral:<model> or openai-compatible:<baseURL>#<model>, got "${raw}"`,
  )
}

const WINDOWS: Record<string, number> = { second: 1000, minute: 60000, hour: 3600000 }

export function parseRateLimit(raw: string): RateLimit | null {
  if (raw === 'off') return null
  const match = /^(\d{1,9})\/(second|minute|hour)$/.exec(raw)
  if (!match || Number(match[1]) < 1) throw new ConfigError('TANDEM_RATE_LIMIT', `must be off or <requests>/<second|minute|hour> (e.g. 1200/minute), got "${raw}"`)
  return { max: Number(match[1]), windowMs: WINDOWS[match[2] as string] as number }
}

function parsePublicUrl(raw: string | undefined): string | null {
  if (raw === undefined || raw === '') return null
  if (!/^https?:\/\//.test(raw) || !URL.canParse(raw)) throw new ConfigError('TANDEM_PUBLIC_URL', `must be an absolute http or https URL, got "${raw}"`)
  return raw.replace(/\/+$/, '')
}

function parseOrigins(raw: string | undefined): string[] | null {
  if (raw === undefined || raw.trim() === '') return null
  const origins = raw.split(',').map((o) => o.trim())
  for (const origin of origins) {
    if (origin !== '*' && !(URL.canParse(origin) && new URL(origin).origin === origin)) {
      throw new ConfigError('TANDEM_CORS_ORIGINS', `must be * or a comma-separated list of origins like https://app.example.com, got "${origin}"`)
    }
  }
  return origins
}

export function parseEgressAllow(raw: string | undefined): string[] {
  if (raw === undefined || raw.trim() === '') return []
  return raw.split(',').map((entry) => {
    const cidr = entry.trim()
    try {
      parseCidr(cidr)
    } catch {
      throw new ConfigError('TANDEM_EGRESS_ALLOW', `must be a comma-separated list of CIDRs like 127.0.0.0/8 or fd00::/8, got "${cidr}"`)
    }
    return cidr
  })
}

/** 32 bytes in base64 (standard or URL-safe alphabet). The error never quotes the value: it is a secret. */
export function parseSecretKey(variable: string, raw: string): Buffer {
  const text = raw.trim()
  const key = Buffer.from(text, 'base64')
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text) || key.length !== 32) {
    throw new ConfigError(variable, `must be 32 random bytes in base64 (e.g. openssl rand -base64 32); the value given is ${/^[A-Za-z0-9+/_-]+={0,2}$/.test(text) ? `${key.length} bytes` : 'not base64'}`)
  }
  return key
}

function parseSecretKeys(env: NodeJS.ProcessEnv, databaseUrl: string): Pick<Config, 'secretKey' | 'secretKeysPrevious'> {
  const raw = env.TANDEM_SECRET_KEY
  const secretKey = raw === undefined || raw === '' ? null : parseSecretKey('TANDEM_SECRET_KEY', raw)
  if (!secretKey && !databaseUrl.startsWith('sqlite:')) {
    throw new ConfigError('TANDEM_SECRET_KEY', 'is required with PostgreSQL (every instance must share the key): set 32 random bytes in base64, e.g. openssl rand -base64 32')
  }
  const previous = env.TANDEM_SECRET_KEY_PREVIOUS
  const secretKeysPrevious = previous === undefined || previous.trim() === '' ? [] : previous.split(',').map((key) => parseSecretKey('TANDEM_SECRET_KEY_PREVIOUS', key))
  return { secretKey, secretKeysPrevious }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const host = env.HOST ?? '127.0.0.1'
  const auth = env.TANDEM_AUTH ?? (isLoopbackHost(host) ? 'local' : 'required')
  if (auth !== 'local' && auth !== 'required') {
    throw new ConfigError('TANDEM_AUTH', `must be local or required, got "${auth}"`)
  }
  const logLevel = env.LOG_LEVEL ?? 'info'
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`)
  }
  const databaseUrl = parseDatabaseUrl(env.DATABASE_URL ?? 'sqlite:./data/tandem.db')
  return {
    port: parseInteger('PORT', env.PORT ?? '3000', 0, 65535),
    host,
    databaseUrl,
    auth,
    drafter: parseDrafter(env.TANDEM_DRAFTER ?? 'builtin'),
    drafterTimeoutMs: parseInteger('TANDEM_DRAFTER_TIMEOUT_MS', env.TANDEM_DRAFTER_TIMEOUT_MS ?? '30000', 1, 600000),
    // On by default where keys are required; off in local mode, so that loopback benchmarks measure the service.
    rateLimit: parseRateLimit(env.TANDEM_RATE_LIMIT ?? (auth === 'required' ? '1200/minute' : 'off')),
    corsOrigins: parseOrigins(env.TANDEM_CORS_ORIGINS),
    requestTimeoutMs: parseInteger('TANDEM_REQUEST_TIMEOUT_MS', env.TANDEM_REQUEST_TIMEOUT_MS ?? '120000', 1000, 3600000),
    logLevel,
    eventRetentionDays: parseInteger('TANDEM_EVENT_RETENTION_DAYS', env.TANDEM_EVENT_RETENTION_DAYS ?? '7', 1, 3650),
    sseKeepAliveMs: parseInteger('TANDEM_SSE_KEEPALIVE_MS', env.TANDEM_SSE_KEEPALIVE_MS ?? '15000', 10, 3600000),
    sseMaxBufferBytes: parseInteger('TANDEM_SSE_MAX_BUFFER_BYTES', env.TANDEM_SSE_MAX_BUFFER_BYTES ?? String(1024 * 1024), 1024, 1024 * 1024 * 1024),
    webhookRetryBaseMs: parseInteger('TANDEM_WEBHOOK_RETRY_BASE_MS', env.TANDEM_WEBHOOK_RETRY_BASE_MS ?? '5000', 1, 86400000),
    workers: parseInteger('TANDEM_WORKERS', env.TANDEM_WORKERS ?? '8', 0, 1000),
    runs: {
      publicUrl: parsePublicUrl(env.TANDEM_PUBLIC_URL),
      taskLeaseS: parseInteger('TANDEM_TASK_LEASE_S', env.TANDEM_TASK_LEASE_S ?? '300', 1, 86400),
      taskTimeoutS: parseInteger('TANDEM_TASK_TIMEOUT_S', env.TANDEM_TASK_TIMEOUT_S ?? '3600', 1, 30 * 86400),
      dispatchTimeoutMs: parseInteger('TANDEM_DISPATCH_TIMEOUT_MS', env.TANDEM_DISPATCH_TIMEOUT_MS ?? '30000', 1, 600000),
      dispatchAttempts: parseInteger('TANDEM_DISPATCH_ATTEMPTS', env.TANDEM_DISPATCH_ATTEMPTS ?? '5', 1, 100),
      pollIntervalMs: parseInteger('TANDEM_POLL_INTERVAL_MS', env.TANDEM_POLL_INTERVAL_MS ?? '10000', 1, 3600000),
    },
    egressAllow: parseEgressAllow(env.TANDEM_EGRESS_ALLOW),
    ...parseSecretKeys(env, databaseUrl),
  }
}
