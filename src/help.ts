// `npm start -- --help`: every setting the server reads, its default and what it is for, grouped as a
// newcomer looks for them. test/help.test.ts checks that every variable src/config.ts reads is listed here.

interface Setting {
  name: string
  default: string
  meaning: string
}

export const SETTINGS: Array<{ group: string; settings: Setting[] }> = [
  {
    group: 'Server',
    settings: [
      { name: 'PORT', default: '3000', meaning: '0 picks a free port' },
      { name: 'HOST', default: '127.0.0.1', meaning: 'bind address; off loopback, API keys are required' },
      { name: 'DATABASE_URL', default: 'sqlite:./data/tandem.db', meaning: 'also sqlite::memory: or postgres://user:pass@host:5432/db' },
      { name: 'TANDEM_AUTH', default: 'local on a loopback HOST, else required', meaning: 'local: no key needed; required: Authorization: Bearer <key>' },
      { name: 'LOG_LEVEL', default: 'info', meaning: 'fatal, error, warn, info, debug, trace or silent' },
      { name: 'TANDEM_ACCESS_LOG', default: 'off', meaning: 'on: one log line per request' },
      { name: 'TANDEM_REQUEST_TIMEOUT_MS', default: '120000', meaning: 'a request must arrive and be answered within this time' },
      { name: 'TANDEM_MAX_CONNECTIONS', default: '1024', meaning: 'open connections at once' },
      { name: 'TANDEM_CORS_ORIGINS', default: '(CORS off)', meaning: '* or origins allowed to call from a browser (not with TANDEM_AUTH=local)' },
      { name: 'TANDEM_RATE_LIMIT', default: '1200/minute with keys, else off', meaning: '<requests>/<second|minute|hour> per API key, or off' },
      { name: 'TANDEM_PEER_RATE_LIMIT', default: 'TANDEM_RATE_LIMIT', meaning: 'the same, per peer address, before authentication' },
      { name: 'TANDEM_REDIS_URL', default: '(none)', meaning: 'redis://host:port: one rate limit shared by every instance' },
      { name: 'TANDEM_METRICS_TOKEN', default: '(none)', meaning: 'Bearer token for /metrics outside local auth mode (without it, /metrics is a 404 there)' },
      { name: 'TANDEM_METRICS_AGENT_LABELS', default: '100', meaning: 'distinct agent_id label values of the decision metrics per instance, then _other' },
      { name: 'TANDEM_INSIGHTS_FOLD_MS', default: '1000', meaning: "how often the runs' changes are added to the scorecards' summed rollups (0: never)" },
      { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', default: '(none: no traces)', meaning: 'export OpenTelemetry traces over OTLP/HTTP (with OTEL_EXPORTER_OTLP_PROTOCOL, _HEADERS, OTEL_SERVICE_NAME…; docs/insights.md)' },
      { name: 'TANDEM_MAX_STREAMS_PER_KEY', default: 'an eighth of TANDEM_MAX_CONNECTIONS', meaning: 'event streams and waiting task claims one principal may hold at once' },
      { name: 'TANDEM_MAX_STREAMS_PER_PEER', default: 'a quarter of TANDEM_MAX_CONNECTIONS', meaning: 'the same, per peer address' },
    ],
  },
  {
    group: 'Secrets',
    settings: [
      { name: 'TANDEM_SECRET_KEY', default: 'SQLite: a secret.key file beside the database', meaning: '32 random bytes in base64 (openssl rand -base64 32); required with PostgreSQL' },
      { name: 'TANDEM_SECRET_KEY_PREVIOUS', default: '(none)', meaning: 'former keys that still decrypt during a rotation, comma-separated' },
    ],
  },
  {
    group: 'Runs and agents',
    settings: [
      { name: 'TANDEM_EGRESS_ALLOW', default: '(public addresses only)', meaning: 'CIDRs agents may also be called on, e.g. 127.0.0.0/8 for an agent on this machine' },
      { name: 'TANDEM_PUBLIC_URL', default: 'the listening URL', meaning: 'base of the result URL handed to agents (set it behind a proxy)' },
      { name: 'TANDEM_WORKERS', default: '8', meaning: 'background jobs this instance runs at once; 0: HTTP only' },
      { name: 'TANDEM_FAILOVER_S', default: '60', meaning: 'a dead instance\'s jobs and idempotency keys are taken over within this time (PostgreSQL)' },
      { name: 'TANDEM_TASK_LEASE_S', default: '300', meaning: 'how long a claimed task is reserved for its claimer' },
      { name: 'TANDEM_TASK_TIMEOUT_S', default: '3600', meaning: 'a task unanswered this long fails' },
      { name: 'TANDEM_DISPATCH_TIMEOUT_MS', default: '30000', meaning: 'time limit of one delivery to an agent' },
      { name: 'TANDEM_DISPATCH_ATTEMPTS', default: '5', meaning: 'deliveries of a task before it fails as unreachable' },
      { name: 'TANDEM_POLL_INTERVAL_MS', default: '10000', meaning: 'how often a slow vendor is asked again' },
      { name: 'TANDEM_ASSET_MAX_BYTES', default: '1048576', meaning: 'the largest avatar image POST /api/assets takes (at most 16 MiB)' },
      { name: 'TANDEM_TOOL_TIMEOUT_MS', default: '30000', meaning: 'one MCP operation (listing tools, calling one), connecting included' },
      { name: 'TANDEM_TOOL_STEPS', default: '16', meaning: 'the most model steps of one task\'s tool loop (claude, mistral)' },
    ],
  },
  {
    group: 'Operators',
    settings: [
      { name: 'TANDEM_CLAIM_TTL_S', default: '900', meaning: 'how long a claim on an inbox item lasts' },
      { name: 'TANDEM_HOOK_RATE_LIMIT', default: '120/minute', meaning: 'calls one inbound hook takes, or off' },
      { name: 'TANDEM_MAX_ENABLED_SCHEDULES', default: '200', meaning: 'enabled schedules one workspace may have' },
      { name: 'TANDEM_SCHEDULE_FIRINGS_PER_MINUTE', default: '120', meaning: 'schedule ticks one workspace fires per clock minute' },
    ],
  },
  {
    group: 'Drafting',
    settings: [
      { name: 'TANDEM_DRAFTER', default: 'builtin', meaning: 'anthropic:<model>, mistral:<model> or openai-compatible:<baseURL>#<model>' },
      { name: 'TANDEM_DRAFTER_TIMEOUT_MS', default: '30000', meaning: 'how long a model-backed draft may take' },
      { name: 'ANTHROPIC_API_KEY, MISTRAL_API_KEY, OPENAI_COMPATIBLE_API_KEY', default: '(none)', meaning: 'the key of the drafter TANDEM_DRAFTER names' },
      { name: 'ANTHROPIC_BASE_URL, MISTRAL_BASE_URL', default: "the providers' own", meaning: "another address for that provider's API" },
    ],
  },
  {
    group: 'Events and webhooks',
    settings: [
      { name: 'TANDEM_EVENT_RETENTION_DAYS', default: '7', meaning: 'events older than this are purged' },
      { name: 'TANDEM_SSE_KEEPALIVE_MS', default: '15000', meaning: 'keep-alive comment interval on event streams' },
      { name: 'TANDEM_SSE_MAX_BUFFER_BYTES', default: '1048576', meaning: 'an event stream further behind is dropped (the client resumes)' },
      { name: 'TANDEM_SSE_MAX_LIFETIME_S', default: '3600', meaning: 'an event stream ends after this long (the client resumes with Last-Event-ID)' },
      { name: 'TANDEM_A2A_WAIT_S', default: '60', meaning: 'a blocking A2A SendMessage answers after this long at the latest, with the task as it is' },
      { name: 'TANDEM_MCP_SESSION_IDLE_S', default: '86400', meaning: 'an MCP session unused this long ends (the client initializes again)' },
      { name: 'TANDEM_WEBHOOK_RETRY_BASE_MS', default: '5000', meaning: 'first webhook retry delay (then 4 times longer each time)' },
      { name: 'TANDEM_WEBHOOK_TIMEOUT_MS', default: '10000', meaning: 'a webhook endpoint must answer within this time' },
    ],
  },
]

export function helpText(): string {
  const lines = [
    'Usage: npm start [-- --help]',
    '',
    'Serves the Tandem API, its docs at /docs and the console at / (default http://127.0.0.1:3000/).',
    'Every setting is an environment variable, all optional; ./.env is read too (see .env.example),',
    'and a variable set in the environment wins over the file.',
  ]
  for (const { group, settings } of SETTINGS) {
    lines.push('', `${group}:`)
    for (const setting of settings) lines.push(`  ${setting.name}`, `      ${setting.meaning} (default: ${setting.default})`)
  }
  lines.push('', 'More: docs/operations.md')
  return lines.join('\n')
}
