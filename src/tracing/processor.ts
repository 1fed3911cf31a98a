// A bounded batch span processor: ended spans wait in a queue of at most OTEL_BSP_MAX_QUEUE_SIZE and leave in
// batches (OTEL_BSP_MAX_EXPORT_BATCH_SIZE) every OTEL_BSP_SCHEDULE_DELAY ms, one export at a time, each given up
// after OTEL_BSP_EXPORT_TIMEOUT. A span that finds the queue full, or whose export failed, is dropped and counted
// — so a collector that is down or slow costs the service a bounded amount of memory and never a request's time.
import type { Context } from '@opentelemetry/api'
import type { ReadableSpan, Span, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-base'

export interface BatchLimits {
  maxQueueSize: number
  maxExportBatchSize: number
  scheduleDelayMs: number
  exportTimeoutMs: number
}

export class BoundedBatchProcessor implements SpanProcessor {
  private queue: ReadableSpan[] = []
  private timer: NodeJS.Timeout | null = null
  private exporting: Promise<void> | null = null

  private readonly exporter: SpanExporter
  private readonly limits: BatchLimits
  private readonly dropped: (count: number, reason: 'queue_full' | 'export_failed') => void

  constructor(
    exporter: SpanExporter,
    limits: BatchLimits,
    dropped: (count: number, reason: 'queue_full' | 'export_failed') => void,
  ) {
    this.exporter = exporter
    this.limits = limits
    this.dropped = dropped
  }

  onStart(_span: Span, _context: Context): void {}

  onEnd(span: ReadableSpan): void {
    if ((span.spanContext().traceFlags & 1) === 0) return
    if (this.queue.length >= this.limits.maxQueueSize) return this.dropped(1, 'queue_full')
    this.queue.push(span)
    if (this.queue.length >= this.limits.maxExportBatchSize) void this.exportAll()
    else this.timer ??= setTimeout(() => void this.exportAll(), this.limits.scheduleDelayMs).unref()
  }

  /** Exports what is queued, batch after batch; a second call while one runs waits for it. */
  exportAll(): Promise<void> {
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    this.exporting ??= (async () => {
      while (this.queue.length > 0) await this.exportBatch(this.queue.splice(0, this.limits.maxExportBatchSize))
    })().finally(() => {
      this.exporting = null
    })
    return this.exporting
  }

  private exportBatch(batch: ReadableSpan[]): Promise<void> {
    return new Promise((resolve) => {
      const giveUp = setTimeout(() => {
        this.dropped(batch.length, 'export_failed')
        resolve()
      }, this.limits.exportTimeoutMs)
      try {
        this.exporter.export(batch, (result) => {
          clearTimeout(giveUp)
          if (result.code !== 0) this.dropped(batch.length, 'export_failed')
          resolve()
        })
      } catch {
        clearTimeout(giveUp)
        this.dropped(batch.length, 'export_failed')
        resolve()
      }
    })
  }

  async forceFlush(): Promise<void> {
    await this.exportAll()
  }

  async shutdown(): Promise<void> {
    await this.exportAll()
    await this.exporter.shutdown()
  }
}
