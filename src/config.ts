// Environment → typed configuration. A bad value stops start-up with one line naming the variable.
import { isIP } from 'node:net'
import { parseCidr } from './net/egress.js'
import { defaultHeldLimits } from './http/rate-limit-slots.js'
import { ConfigError } from './config-error.js'
import { parseTracing, type TracingSettings } from './tracing-settings.js'

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
  /** Requests per API key and window; null when off. */
  rateLimit: RateLimit | null
  /** Requests per peer address and window, counted before authentication; null when off. */
  peerRateLimit: RateLimit | null
  /** Origins allowed to call from a browser; null: CORS off. */
  corsOrigins: string[] | null
  requestTimeoutMs: number
  /** Open connections the server accepts at once; more are closed as they arrive. */
  maxConnections: number
  /** Event streams and long-polling claims one principal may hold at once (default: an eighth of maxConnections). */
  maxStreamsPerKey: number
  /** … and one peer address (default: a quarter of maxConnections). */
  maxStreamsPerPeer: number
  /** An event stream is ended after this long; the client reconnects with Last-Event-ID. */
  sseMaxLifetimeMs: number
  /** An MCP session unused this long ends (TANDEM_MCP_SESSION_IDLE_S); its next request is a 404. */
  mcpSessionIdleMs: number
  /** How long a blocking A2A SendMessage waits for an interrupted or final state (docs/a2a.md). */
  a2aWaitMs: number
  logLevel: string
  /** Events older than this many days are purged (an `after` before them is a 410). */
  eventRetentionDays: number
  /** How often the scorecards' summed rollups take the engine's changes (src/insights/fold.ts); 0: never. */
  insightsFoldMs: number
  /** How often an open event stream gets a `: keep-alive` comment. */
  sseKeepAliveMs: number
  /** An event stream whose unsent output passes this many bytes is dropped (the client resumes). */
  sseMaxBufferBytes: number
  /** The first webhook retry waits this long; each next one 4× longer. */
  webhookRetryBaseMs: number
  /** A webhook endpoint must answer within this time (else the attempt failed). */
  webhookTimeoutMs: number
  /** TANDEM_WORKERS: background jobs (deliveries, time-outs, polls) this instance runs at once; 0: none. */
  workers: number
  /** TANDEM_FAILOVER_S in ms: a dead instance's jobs and idempotency claims are taken over within this time (PostgreSQL). */
  failoverMs: number
  runs: RunsConfig
  /** Inbox claims, schedules, message triggers and inbound hooks (docs/operators.md). */
  operators: OperatorsConfig
  /** CIDRs outgoing calls to user-given addresses may reach besides public unicast (TANDEM_EGRESS_ALLOW). */
  egressAllow: string[]
  /** TANDEM_SECRET_KEY: the vault key (null: SQLite's secret.key file, or a per-process key for sqlite::memory:). */
  secretKey: Buffer | null
  /** TANDEM_SECRET_KEY_PREVIOUS (comma-separated): keys that still decrypt during a rotation. */
  secretKeysPrevious: Buffer[]
  /** One structured log line per request, at info level; off: no per-request logging work at all. */
  accessLog: boolean
  /** Bearer token for /metrics on a non-loopback bind; null: /metrics is a 404 there. */
  metricsToken: string | null
  /** TANDEM_METRICS_AGENT_LABELS: distinct agent_id label values per instance before `_other`. */
  metricsAgentLabels: number
  /** OpenTelemetry traces (src/tracing); null: off, and nothing of the SDK is loaded. */
  tracing: TracingSettings | null
  /** Redis for the rate limit shared by every instance; null: counted per instance. */
  redisUrl: string | null
  /** TANDEM_ASSET_MAX_BYTES: the largest image POST /api/assets takes (docs/agents-templates-assets.md, avatars). */
  assetMaxBytes: number
  /** TANDEM_TOOL_TIMEOUT_MS: one MCP operation (listing a server's tools, calling one), connecting included (docs/tools-and-approvals.md, "Tools"). */
  toolTimeoutMs: number
  /** TANDEM_TOOL_STEPS: the most model steps of one task's tool loop (claude, mistral). */
  toolSteps: number
}

/** Operators' settings (docs/operators.md). */
export interface OperatorsConfig {
  /** TANDEM_CLAIM_TTL_S: how long a claim on an inbox item lasts. */
  claimTtlS: number
  /** TANDEM_HOOK_RATE_LIMIT: calls one inbound hook takes per window (each hook counted on its own). */
  hookRateLimit: RateLimit | null
  /** TANDEM_MAX_ENABLED_SCHEDULES: enabled schedules one workspace may have (docs/limits-and-fair-use.md). */
  maxEnabledSchedules: number
  /** TANDEM_SCHEDULE_FIRINGS_PER_MINUTE: schedule ticks one workspace fires per clock minute; later ticks of that minute start nothing. */
  scheduleFiringsPerMinute: number
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

export { ConfigError }

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

/**
 * The URL with its user-info (user name and password) replaced by `***`, for messages and logs. Works on
 * text that does not parse as a URL too: everything between `://` and the last `@` before the path goes.
 */
export function redactUrl(raw: string): string {
  const scheme = raw.indexOf('://')
  if (scheme === -1) return raw
  const authorityStart = scheme + 3
  // A password may hold / ? # unescaped; the user-info ends at the last @ of the text, if any.
  const at = raw.lastIndexOf('@')
  if (at < authorityStart) return raw
  return `${raw.slice(0, authorityStart)}***${raw.slice(at)}`
}

function parseDatabaseUrl(raw: string): string {
  if (raw.startsWith('sqlite:') && raw.length > 'sqlite:'.length) return raw
  if (/^postgres(ql)?:\/\//.test(raw) && URL.canParse(raw)) return raw
  throw new ConfigError('DATABASE_URL', `must be sqlite:<path>, sqlite::memory: or postgres://user:pass@host:port/db, got "${redactUrl(raw)}"`)
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

export function parseRateLimit(raw: string, variable = 'TANDEM_RATE_LIMIT'): RateLimit | null {
  if (raw === 'off') return null
  const match = /^(\d{1,9})\/(second|minute|hour)$/.exec(raw)
  if (!match || Number(match[1]) < 1) throw new ConfigError(variable, `must be off or <requests>/<second|minute|hour> (e.g. 1200/minute), got "${raw}"`)
  return { max: Number(match[1]), windowMs: WINDOWS[match[2] as string] as number }
}

function parsePublicUrl(raw: string | undefined): string | null {
  if (raw === undefined || raw === '') return null
  if (!/^https?:\/\//.test(raw) || !URL.canParse(raw)) throw new ConfigError('TANDEM_PUBLIC_URL', `must be an absolute http or https URL, got "${raw}"`)
  return raw.replace(/\/+$/, '')
}

function parseBoolean(variable: string, raw: string | undefined, fallback: boolean): boolean {
  if (raw === undefined || raw === '') return fallback
  if (['1', 'true', 'on', 'yes'].includes(raw.toLowerCase())) return true
  if (['0', 'false', 'off', 'no'].includes(raw.toLowerCase())) return false
  throw new ConfigError(variable, `must be on or off, got "${raw}"`)
}

function parseRedisUrl(raw: string | undefined): string | null {
  if (raw === undefined || raw === '') return null
  if (/^rediss?:\/\//.test(raw) && URL.canParse(raw)) return raw
  throw new ConfigError('TANDEM_REDIS_URL', 'must be redis://host:port[/db] or rediss://…')
}

function parseToken(raw: string | undefined): string | null {
  if (raw === undefined || raw === '') return null
  if (raw.length < 16 || /\s/.test(raw)) throw new ConfigError('TANDEM_METRICS_TOKEN', 'must be at least 16 characters without spaces')
  return raw
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

/** The variable holding the key of each model provider that needs one (a local OpenAI-compatible server may not). */
const PROVIDER_KEYS = { anthropic: 'ANTHROPIC_API_KEY', mistral: 'MISTRAL_API_KEY' } as const

function requireDrafterKey(drafter: DrafterConfig, env: NodeJS.ProcessEnv): DrafterConfig {
  if (drafter.kind !== 'anthropic' && drafter.kind !== 'mistral') return drafter
  const variable = PROVIDER_KEYS[drafter.kind]
  if (!env[variable]?.trim()) throw new ConfigError(variable, `is required when TANDEM_DRAFTER is ${drafter.kind}:<model> (set it, or use TANDEM_DRAFTER=builtin)`)
  return drafter
}

/** Fair shares of the connection slots (src/http/rate-limit-slots.ts): each at most TANDEM_MAX_CONNECTIONS. */
function parseStreamShares(env: NodeJS.ProcessEnv, maxConnections: number): Pick<Config, 'maxStreamsPerKey' | 'maxStreamsPerPeer'> {
  const defaults = defaultHeldLimits(maxConnections)
  const share = (variable: string, fallback: number) => {
    const raw = env[variable]
    return raw === undefined || raw === '' ? fallback : parseInteger(variable, raw, 1, maxConnections)
  }
  return { maxStreamsPerKey: share('TANDEM_MAX_STREAMS_PER_KEY', defaults.perPrincipal), maxStreamsPerPeer: share('TANDEM_MAX_STREAMS_PER_PEER', defaults.perPeer) }
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
  const corsOrigins = parseOrigins(env.TANDEM_CORS_ORIGINS)
  // Local mode serves this machine's own user only; a browser origin allowed by CORS is somebody else.
  if (auth === 'local' && corsOrigins) {
    throw new ConfigError('TANDEM_CORS_ORIGINS', 'cannot be set with TANDEM_AUTH=local (requests without a key act as the local admin); use TANDEM_AUTH=required')
  }
  // On by default where keys are required; off in local mode, so that loopback benchmarks measure the service.
  const rateLimit = parseRateLimit(env.TANDEM_RATE_LIMIT ?? (auth === 'required' ? '1200/minute' : 'off'))
  const maxConnections = parseInteger('TANDEM_MAX_CONNECTIONS', env.TANDEM_MAX_CONNECTIONS ?? '1024', 1, 1000000)
  return {
    port: parseInteger('PORT', env.PORT ?? '3000', 0, 65535),
    host,
    databaseUrl,
    auth,
    drafter: requireDrafterKey(parseDrafter(env.TANDEM_DRAFTER ?? 'builtin'), env),
    drafterTimeoutMs: parseInteger('TANDEM_DRAFTER_TIMEOUT_MS', env.TANDEM_DRAFTER_TIMEOUT_MS ?? '30000', 1, 600000),
    rateLimit,
    // A peer gets the budget of one key, counted before its key is even looked up: guessing keys meets a 429.
    peerRateLimit: env.TANDEM_PEER_RATE_LIMIT === undefined ? rateLimit : parseRateLimit(env.TANDEM_PEER_RATE_LIMIT, 'TANDEM_PEER_RATE_LIMIT'),
    corsOrigins,
    requestTimeoutMs: parseInteger('TANDEM_REQUEST_TIMEOUT_MS', env.TANDEM_REQUEST_TIMEOUT_MS ?? '120000', 1000, 3600000),
    maxConnections,
    ...parseStreamShares(env, maxConnections),
    sseMaxLifetimeMs: parseInteger('TANDEM_SSE_MAX_LIFETIME_S', env.TANDEM_SSE_MAX_LIFETIME_S ?? '3600', 1, 7 * 86400) * 1000,
    mcpSessionIdleMs: parseInteger('TANDEM_MCP_SESSION_IDLE_S', env.TANDEM_MCP_SESSION_IDLE_S ?? '86400', 1, 30 * 86400) * 1000,
    a2aWaitMs: parseInteger('TANDEM_A2A_WAIT_S', env.TANDEM_A2A_WAIT_S ?? '60', 0, 3600) * 1000,
    logLevel,
    eventRetentionDays: parseInteger('TANDEM_EVENT_RETENTION_DAYS', env.TANDEM_EVENT_RETENTION_DAYS ?? '7', 1, 3650),
    insightsFoldMs: parseInteger('TANDEM_INSIGHTS_FOLD_MS', env.TANDEM_INSIGHTS_FOLD_MS ?? '1000', 0, 3600000),
    sseKeepAliveMs: parseInteger('TANDEM_SSE_KEEPALIVE_MS', env.TANDEM_SSE_KEEPALIVE_MS ?? '15000', 10, 3600000),
    sseMaxBufferBytes: parseInteger('TANDEM_SSE_MAX_BUFFER_BYTES', env.TANDEM_SSE_MAX_BUFFER_BYTES ?? String(1024 * 1024), 1024, 1024 * 1024 * 1024),
    webhookRetryBaseMs: parseInteger('TANDEM_WEBHOOK_RETRY_BASE_MS', env.TANDEM_WEBHOOK_RETRY_BASE_MS ?? '5000', 1, 86400000),
    webhookTimeoutMs: parseInteger('TANDEM_WEBHOOK_TIMEOUT_MS', env.TANDEM_WEBHOOK_TIMEOUT_MS ?? '10000', 1, 600000),
    workers: parseInteger('TANDEM_WORKERS', env.TANDEM_WORKERS ?? '8', 0, 1000),
    failoverMs: parseInteger('TANDEM_FAILOVER_S', env.TANDEM_FAILOVER_S ?? '60', 3, 3600) * 1000,
    runs: {
      publicUrl: parsePublicUrl(env.TANDEM_PUBLIC_URL),
      taskLeaseS: parseInteger('TANDEM_TASK_LEASE_S', env.TANDEM_TASK_LEASE_S ?? '300', 1, 86400),
      taskTimeoutS: parseInteger('TANDEM_TASK_TIMEOUT_S', env.TANDEM_TASK_TIMEOUT_S ?? '3600', 1, 30 * 86400),
      dispatchTimeoutMs: parseInteger('TANDEM_DISPATCH_TIMEOUT_MS', env.TANDEM_DISPATCH_TIMEOUT_MS ?? '30000', 1, 600000),
      dispatchAttempts: parseInteger('TANDEM_DISPATCH_ATTEMPTS', env.TANDEM_DISPATCH_ATTEMPTS ?? '5', 1, 100),
      pollIntervalMs: parseInteger('TANDEM_POLL_INTERVAL_MS', env.TANDEM_POLL_INTERVAL_MS ?? '10000', 1, 3600000),
    },
    operators: {
      claimTtlS: parseInteger('TANDEM_CLAIM_TTL_S', env.TANDEM_CLAIM_TTL_S ?? '900', 1, 86400),
      hookRateLimit: parseRateLimit(env.TANDEM_HOOK_RATE_LIMIT ?? '120/minute', 'TANDEM_HOOK_RATE_LIMIT'),
      maxEnabledSchedules: parseInteger('TANDEM_MAX_ENABLED_SCHEDULES', env.TANDEM_MAX_ENABLED_SCHEDULES ?? '200', 1, 100000),
      scheduleFiringsPerMinute: parseInteger('TANDEM_SCHEDULE_FIRINGS_PER_MINUTE', env.TANDEM_SCHEDULE_FIRINGS_PER_MINUTE ?? '120', 1, 1000000),
    },
    egressAllow: parseEgressAllow(env.TANDEM_EGRESS_ALLOW),
    ...parseSecretKeys(env, databaseUrl),
    accessLog: parseBoolean('TANDEM_ACCESS_LOG', env.TANDEM_ACCESS_LOG, false),
    metricsToken: parseToken(env.TANDEM_METRICS_TOKEN),
    tracing: parseTracing(env),
    metricsAgentLabels: parseInteger('TANDEM_METRICS_AGENT_LABELS', env.TANDEM_METRICS_AGENT_LABELS ?? '100', 1, 10000),
    redisUrl: parseRedisUrl(env.TANDEM_REDIS_URL),
    assetMaxBytes: parseInteger('TANDEM_ASSET_MAX_BYTES', env.TANDEM_ASSET_MAX_BYTES ?? String(1024 * 1024), 1, 16 * 1024 * 1024),
    toolTimeoutMs: parseInteger('TANDEM_TOOL_TIMEOUT_MS', env.TANDEM_TOOL_TIMEOUT_MS ?? '30000', 1, 600000),
    toolSteps: parseInteger('TANDEM_TOOL_STEPS', env.TANDEM_TOOL_STEPS ?? '16', 1, 100),
  }
}
