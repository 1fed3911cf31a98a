// OpenTelemetry traces (docs/insights.md, "Traces"), loaded only when an OTLP endpoint is set: the official SDK
// and OTLP/HTTP exporters, a bounded export queue, and the spans of Tandem's work on the GenAI conventions — the
// HTTP server span, invoke_workflow per run, invoke_agent per attempt, chat per model call of Tandem's own loop,
// execute_tool per tool call and `tandem.wait …` per human wait. A long span is recorded when it ends, with its
// stored or derived id and its start time, so one run is one trace whatever job or instance finishes each part.
import { AsyncLocalStorage } from 'node:async_hooks'
import { randomBytes } from 'node:crypto'
import client from 'prom-client'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Tracer } from '@opentelemetry/api'
import {
  AlwaysOffSampler, AlwaysOnSampler, BasicTracerProvider, ParentBasedSampler, SamplingDecision, TraceIdRatioBasedSampler, type Sampler, type SpanExporter,
} from '@opentelemetry/sdk-trace-base'
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources'
import { parseTraceparent, traceparentFor } from '../http/trace.js'
import { dbContext } from '../db/context.js'
import { onInsightEvent, type InsightEvent } from '../insights/events.js'
import type { TracingSettings } from '../tracing-settings.js'
import { BoundedBatchProcessor } from './processor.js'
import { ChosenIdGenerator, derivedSpanId } from './ids.js'
import { PROVIDER_NAMES, spansOfTask } from './task-spans.js'
import { rootMarker } from './triggered.js'
import { afterCommit } from '../db/retry.js'

export interface SpanSpec {
  name: string
  kind: SpanKind
  /** The span's own context: a W3C traceparent (its trace id, its span id); the trace's flags decide sampling. */
  traceId: string
  spanId: string
  flags: string
  parentSpanId: string | null
  start: number
  end: number
  attributes: Attributes
  error?: string | null
  /** Spans of other traces this one is linked to (the request that ended it; the run whose message started it). */
  links?: Array<{ traceId: string; spanId: string; flags: string }>
}

export type RecordSpan = (spec: SpanSpec) => void

function samplerOf(settings: TracingSettings): Sampler {
  const ratio = Number.isFinite(settings.samplerArg) && settings.samplerArg >= 0 && settings.samplerArg <= 1 ? settings.samplerArg : 1
  const root: Record<string, Sampler> = { always_on: new AlwaysOnSampler(), always_off: new AlwaysOffSampler(), traceidratio: new TraceIdRatioBasedSampler(ratio) }
  const [parented, name] = settings.sampler.startsWith('parentbased_') ? [true, settings.sampler.slice('parentbased_'.length)] : [false, settings.sampler]
  const chosen = root[name] ?? new AlwaysOnSampler()
  return parented ? new ParentBasedSampler({ root: chosen }) : chosen
}

async function exporterOf(settings: TracingSettings): Promise<SpanExporter> {
  const options = { url: settings.url, headers: settings.headers, timeoutMillis: settings.timeoutMs }
  if (settings.protocol === 'http/json') return new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter(options)
  return new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter(options)
}

export async function startTracing(app: FastifyInstance, settings: TracingSettings): Promise<void> {
  const dropped = new client.Counter({
    name: 'tandem_trace_spans_dropped_total',
    help: 'Spans not exported, by reason: queue_full (the export queue was at OTEL_BSP_MAX_QUEUE_SIZE) or export_failed',
    labelNames: ['reason'],
    registers: [app.metrics.registry],
  })
  const ids = new ChosenIdGenerator()
  const detected = detectResources({ detectors: [envDetector] })
  const resource = resourceFromAttributes({ 'service.name': 'tandem' })
    .merge(detected)
    .merge(resourceFromAttributes({ ...settings.resourceAttributes, ...(settings.serviceName ? { 'service.name': settings.serviceName } : {}) }))
  const processor = new BoundedBatchProcessor(await exporterOf(settings), settings, (count, reason) => dropped.inc({ reason }, count))
  const sampler = samplerOf(settings)
  const provider = new BasicTracerProvider({ resource, sampler, idGenerator: ids, spanProcessors: [processor] })
  const tracer: Tracer = provider.getTracer('tandem')

  const record: RecordSpan = (spec) => {
    const parent = spec.parentSpanId
      ? trace.setSpanContext(ROOT_CONTEXT, { traceId: spec.traceId, spanId: spec.parentSpanId, traceFlags: parseInt(spec.flags, 16) & 1, isRemote: true })
      : ROOT_CONTEXT
    ids.choose({ traceId: spec.traceId, spanId: spec.spanId })
    const links = (spec.links ?? []).map((l) => ({ context: { traceId: l.traceId, spanId: l.spanId, traceFlags: parseInt(l.flags, 16) & 1, isRemote: true } }))
    const span = tracer.startSpan(spec.name, { kind: spec.kind, startTime: new Date(spec.start), attributes: spec.attributes, links }, parent)
    ids.choose({})
    if (spec.error) {
      span.setAttribute('error.type', spec.error)
      span.setStatus({ code: SpanStatusCode.ERROR })
    }
    span.end(new Date(Math.max(spec.start, spec.end)))
  }

  // The HTTP server span: its id is the request's own span (http/trace.ts), the one stored with the work it starts.
  const started = new WeakMap<FastifyRequest, number>()
  app.addHook('onRequest', async (request) => {
    started.set(request, Date.now())
  })
  app.addHook('onResponse', async (request, reply) => {
    const own = parseTraceparent(traceparentFor(request))
    if (!own) return
    const header = request.headers.traceparent
    const caller = parseTraceparent(typeof header === 'string' ? header : undefined)
    const route = request.routeOptions.url
    record({
      name: route ? `${request.method} ${route}` : request.method,
      kind: SpanKind.SERVER,
      traceId: own.traceId,
      spanId: own.spanId,
      flags: own.flags,
      parentSpanId: caller?.spanId ?? null,
      start: started.get(request) ?? Date.now(),
      end: Date.now(),
      attributes: { 'http.request.method': request.method, ...(route ? { 'http.route': route } : {}), 'http.response.status_code': reply.statusCode, 'url.scheme': request.protocol },
      error: reply.statusCode >= 500 ? String(reply.statusCode) : null,
    })
  })

  // A request acting on a run (a decision, an answer, a tool call's approval) keeps its own trace: a span of the
  // run it ends (the wait, the run, an agent's attempt) links to the request's span. The request is found from the
  // engine's event through the request's async context.
  const acting = new AsyncLocalStorage<FastifyRequest>()
  app.addHook('onRequest', (request, _reply, done) => acting.run(request, done))
  // Recorded once the change commits: a transaction run again after a deadlock (src/db/retry.ts) records its spans once.
  const linkedIn = (db: object): RecordSpan => (spec) => {
    const request = acting.getStore()
    const own = request ? parseTraceparent(traceparentFor(request)) : null
    afterCommit(db, () => record(own && own.traceId !== spec.traceId ? { ...spec, links: [...(spec.links ?? []), own] } : spec))
  }

  dbContext(app.database.db).tracesOn = true
  // A triggered run's new trace is sampled as the root invoke_workflow will be (src/tracing/triggered.ts).
  dbContext(app.database.db).sampleRoot = (traceId) =>
    sampler.shouldSample(ROOT_CONTEXT, traceId, 'invoke_workflow', SpanKind.INTERNAL, {}, []).decision === SamplingDecision.RECORD_AND_SAMPLED
  onInsightEvent(app.database.db, (event, db) => spansOfEvent(event, linkedIn(db), settings, db))
  // Shutting down flushes what is queued, for at most OTEL_BSP_EXPORT_TIMEOUT (5 s at most): a collector that is down
  // never holds the process.
  app.addHook('onClose', async () => {
    let timer: NodeJS.Timeout | undefined
    const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.min(settings.exportTimeoutMs, 5000)).unref()))
    await Promise.race([provider.shutdown().catch(() => undefined), bound])
    clearTimeout(timer)
  })
}

async function spansOfEvent(event: InsightEvent, record: RecordSpan, settings: TracingSettings, db: Parameters<typeof spansOfTask>[2]): Promise<void> {
  const context = event.type === 'decision' || event.type === 'tool_approval' ? null : parseTraceparent(event.traceparent ?? undefined)
  if (!context) return
  if (event.type === 'run_finished') {
    const { run } = event
    // A run no request started (src/tracing/triggered.ts) is its trace's root: it names what started it, and
    // links to the run whose message did, when that is known.
    const root = context.spanId === rootMarker(context.traceId)
    const started = root ? await db.selectFrom('runs').select(['trigger_kind', 'trigger_id', 'trace_link']).where('id', '=', run.id).executeTakeFirst() : undefined
    const link = parseTraceparent(started?.trace_link ?? undefined)
    const triggerKey = started?.trigger_id ? TRIGGER_ATTRIBUTES[started.trigger_kind] : undefined
    record({
      name: `invoke_workflow ${run.triggerName}`,
      kind: SpanKind.INTERNAL,
      traceId: context.traceId,
      spanId: derivedSpanId('invoke_workflow', run.id),
      flags: context.flags,
      parentSpanId: root ? null : context.spanId,
      start: Date.parse(run.createdAt),
      end: Date.parse(run.finishedAt ?? new Date().toISOString()),
      attributes: {
        'gen_ai.operation.name': 'invoke_workflow', 'gen_ai.workflow.name': run.triggerName, 'gen_ai.agent.name': run.triggerName, 'tandem.run.id': run.id, 'tandem.cycle.id': run.cycleId,
        ...(started ? { 'tandem.trigger.kind': started.trigger_kind } : {}),
        ...(triggerKey && started?.trigger_id ? { [triggerKey]: started.trigger_id } : {}),
      },
      error: run.status === 'failed' ? (run.error?.type.split(':').pop() ?? 'failed') : null,
      ...(link ? { links: [link] } : {}),
    })
  } else if (event.type === 'model_step') {
    // A model call of Tandem's loop, under the task's invoke_agent; no message text (the content opt-in covers
    // the agent's answer on invoke_agent).
    const { step } = event
    record({
      name: `chat ${step.model}`,
      kind: SpanKind.CLIENT,
      traceId: context.traceId,
      spanId: randomSpanId(),
      flags: context.flags,
      parentSpanId: context.spanId,
      start: step.start,
      end: step.end,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': PROVIDER_NAMES[event.providerType] ?? event.providerType,
        'gen_ai.request.model': step.model,
        ...(step.usage ? { 'gen_ai.usage.input_tokens': step.usage.inputTokens, 'gen_ai.usage.output_tokens': step.usage.outputTokens } : {}),
        ...(step.finishReason ? { 'gen_ai.response.finish_reasons': [step.finishReason] } : {}),
        'tandem.run.id': event.runId,
        'tandem.phase_run.id': event.phaseRunId,
        'tandem.task.id': event.taskId,
      },
      error: step.error,
    })
  } else if (event.type === 'task_settled') {
    await spansOfTask(event, record, db, settings.captureContent)
  } else if (event.type === 'wait_ended') {
    record({
      name: `tandem.wait ${event.kind}`,
      kind: SpanKind.INTERNAL,
      traceId: context.traceId,
      spanId: randomSpanId(),
      flags: context.flags,
      parentSpanId: event.callId ? derivedSpanId('execute_tool', event.callId) : derivedSpanId('invoke_workflow', event.runId),
      start: Date.parse(event.since),
      end: Date.parse(event.at),
      attributes: {
        'tandem.wait.kind': event.kind,
        'tandem.wait.outcome': event.outcome,
        'tandem.wait.decided_by': event.decidedBy,
        'tandem.run.id': event.runId,
        'tandem.phase_run.id': event.phaseRunId,
        ...(event.callId ? { 'tandem.tool_call.id': event.callId } : {}),
      },
    })
  }
}

/** The attribute naming what started a triggered run, per runs.trigger_kind. */
const TRIGGER_ATTRIBUTES: Record<string, string> = { schedule: 'tandem.schedule.id', message: 'tandem.message_trigger.id', hook: 'tandem.hook.id' }

function randomSpanId(): string {
  return randomBytes(8).toString('hex')
}
