// Work a background trigger refused (a message chain past its width, a schedule past its workspace's firings per
// minute): logged at `warn` and counted in `tandem_trigger_refusals_total{reason}`, where an instance's operators
// look. The counter is registered once per app's registry, here, so the metrics module needs no change.
import client from 'prom-client'

export type RefusalReason = 'message-chain' | 'schedule-rate'

export interface RefusalSink {
  log: { warn(object: object, message: string): void }
  metrics?: { registry: client.Registry }
}

const counters = new WeakMap<client.Registry, client.Counter<'reason'>>()

function counterOf(registry: client.Registry): client.Counter<'reason'> {
  let counter = counters.get(registry)
  if (!counter) {
    counter = new client.Counter({ name: 'tandem_trigger_refusals_total', help: 'Runs a message trigger or schedule would have started and did not, by reason (message-chain: the message\'s chain reached its bound; schedule-rate: the workspace\'s firings per minute)', labelNames: ['reason'], registers: [registry] })
    counters.set(registry, counter)
  }
  return counter
}

export function recordRefusal(sink: RefusalSink, reason: RefusalReason, fields: object, message: string): void {
  sink.log.warn({ reason, ...fields }, message)
  if (sink.metrics) counterOf(sink.metrics.registry).inc({ reason })
}
