// The service's Prometheus metrics (prom-client): one registry per app, so that several apps in one process
// (the tests) keep their own counts. Features record through `app.metrics`; GET /metrics serves the registry.
import client from 'prom-client'

export interface Metrics {
  registry: client.Registry
  httpDuration: client.Histogram<'method' | 'route' | 'status'>
  runs: client.Counter<'status'>
  tasks: client.Counter<'provider' | 'outcome'>
  taskDelivery: client.Histogram<'provider'>
  /** Tokens vendors reported for agents' answers (src/metrics/tokens.ts). */
  agentTokens: client.Counter<'provider' | 'direction'>
  tasksWaiting: client.Gauge
  sseClients: client.Gauge
  webhookDeliveries: client.Counter<'outcome'>
  dbPoolInUse: client.Gauge
  rateLimitStoreErrors: client.Counter
  /** Read at scrape time; a feature may fill in its own (the runs feature sets `tasksWaiting`). */
  sources: MetricsSources
}

export interface MetricsSources {
  /** Connections of the database pool checked out now (PostgreSQL; SQLite has no pool and no such series value). */
  poolInUse?(): number
  /** Tasks handed out and not yet answered; read from the database at scrape time. */
  tasksWaiting?(): Promise<number>
}

// Request durations from 1 ms to 10 s: the API answers in milliseconds, drafting and long-polls take longer.
const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
const DELIVERY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]

export function createMetrics(sources: MetricsSources): Metrics {
  const registry = new client.Registry()
  client.collectDefaultMetrics({ register: registry })
  const registers = [registry]
  return {
    registry,
    sources,
    httpDuration: new client.Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP requests by method, route template and status',
      labelNames: ['method', 'route', 'status'],
      buckets: HTTP_BUCKETS,
      registers,
    }),
    runs: new client.Counter({
      name: 'tandem_runs_total',
      help: 'Runs that reached a final status, by status (counted by the instance whose change finished the run)',
      labelNames: ['status'],
      registers,
    }),
    tasks: new client.Counter({
      name: 'tandem_tasks_total',
      help: 'Task deliveries by provider type and outcome (answered, accepted, poll, retry, failed)',
      labelNames: ['provider', 'outcome'],
      registers,
    }),
    taskDelivery: new client.Histogram({
      name: 'tandem_task_delivery_duration_seconds',
      help: 'Time one delivery of a task to its agent took, by provider type',
      labelNames: ['provider'],
      buckets: DELIVERY_BUCKETS,
      registers,
    }),
    agentTokens: new client.Counter({
      name: 'tandem_agent_tokens_total',
      help: 'Tokens agents used, as their vendors (or custom agents) reported them, by provider type and direction (input, output); counted by the instance that received the answer',
      labelNames: ['provider', 'direction'],
      registers,
    }),
    tasksWaiting: new client.Gauge({
      name: 'tandem_tasks_waiting',
      help: 'Tasks handed out and not yet answered',
      registers,
      async collect() {
        if (sources.tasksWaiting) this.set(await sources.tasksWaiting())
      },
    }),
    sseClients: new client.Gauge({ name: 'tandem_sse_clients', help: 'Server-Sent Events connections open on this instance', registers }),
    webhookDeliveries: new client.Counter({
      name: 'tandem_webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome (succeeded, retried, failed)',
      labelNames: ['outcome'],
      registers,
    }),
    dbPoolInUse: new client.Gauge({
      name: 'tandem_db_pool_in_use',
      help: 'Database connections checked out of the pool',
      registers,
      collect() {
        if (sources.poolInUse) this.set(sources.poolInUse())
      },
    }),
    rateLimitStoreErrors: new client.Counter({
      name: 'tandem_rate_limit_store_errors_total',
      help: 'Rate-limit checks that could not reach the shared store (Redis) and let the request through',
      registers,
    }),
  }
}
