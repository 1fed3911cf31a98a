// Span ids derived from what a span covers (a run's invoke_workflow, a tool call's execute_tool), so any job on any
// instance, after any restart, names the parent of what it records without reading it from anywhere; and an id
// generator that hands the SDK the id a span must have (a task's invoke_agent was stored when the task was made).
import { createHash, randomBytes } from 'node:crypto'
import type { IdGenerator } from '@opentelemetry/sdk-trace-base'

export function derivedSpanId(kind: 'invoke_workflow' | 'execute_tool' | 'root', id: string): string {
  const hex = createHash('sha256').update(`${kind}:${id}`).digest('hex').slice(0, 16)
  return hex === '0000000000000000' ? '0000000000000001' : hex
}

/** Random ids, unless the next span's are set (synchronously, right before the SDK starts it). */
export class ChosenIdGenerator implements IdGenerator {
  private next: { traceId?: string; spanId?: string } = {}

  choose(next: { traceId?: string; spanId?: string }): void {
    this.next = next
  }

  generateTraceId(): string {
    const id = this.next.traceId ?? randomBytes(16).toString('hex')
    this.next.traceId = undefined
    return id
  }

  generateSpanId(): string {
    const id = this.next.spanId ?? randomBytes(8).toString('hex')
    this.next.spanId = undefined
    return id
  }
}
