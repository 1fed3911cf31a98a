// Traces are on when an OTLP endpoint is set (the standard OpenTelemetry variables), off otherwise; read with the
// rest of the configuration, so a bad protocol stops start-up naming the variable. Nothing of the SDK is loaded here.
import { ConfigError } from './config-error.js'

export interface TracingSettings {
  /** The traces URL: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces. */
  url: string
  protocol: 'http/protobuf' | 'http/json'
  headers: Record<string, string>
  timeoutMs: number
  serviceName: string
  resourceAttributes: Record<string, string>
  sampler: string
  samplerArg: number
  maxQueueSize: number
  maxExportBatchSize: number
  scheduleDelayMs: number
  exportTimeoutMs: number
  /** OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true: tool arguments and results, outputs, go in spans. */
  captureContent: boolean
}

type Env = Record<string, string | undefined>

/** `k=v,k2=v2`, values percent-decoded (the OpenTelemetry list format); malformed pairs are skipped. */
export function parseKeyValues(raw: string | undefined): Record<string, string> {
  const pairs: Record<string, string> = {}
  for (const part of (raw ?? '').split(',')) {
    const at = part.indexOf('=')
    if (at <= 0) continue
    try {
      pairs[decodeURIComponent(part.slice(0, at).trim())] = decodeURIComponent(part.slice(at + 1).trim())
    } catch {
      // a malformed escape: the pair is skipped, as the SDK does
    }
  }
  return pairs
}

const integer = (env: Env, name: string, fallback: number, min: number, max: number) => {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < min || value > max) throw new ConfigError(name, `must be an integer from ${min} to ${max}`)
  return value
}

export function parseTracing(env: Env): TracingSettings | null {
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim()
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim()
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true' || env.OTEL_TRACES_EXPORTER?.trim() === 'none' || (!traces && !base)) return null
  const url = traces || `${base!.replace(/\/+$/, '')}/v1/traces`
  try {
    new URL(url)
  } catch {
    throw new ConfigError(traces ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT', 'must be an http(s) URL')
  }
  const protocolName = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL'
  const protocol = (env[protocolName]?.trim() || 'http/protobuf') as TracingSettings['protocol']
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') throw new ConfigError(protocolName, 'must be http/protobuf or http/json (grpc is not supported)')
  const maxQueueSize = integer(env, 'OTEL_BSP_MAX_QUEUE_SIZE', 2048, 1, 1_000_000)
  return {
    url,
    protocol,
    headers: { ...parseKeyValues(env.OTEL_EXPORTER_OTLP_HEADERS), ...parseKeyValues(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS) },
    timeoutMs: integer(env, 'OTEL_EXPORTER_OTLP_TIMEOUT', 10_000, 1, 600_000),
    serviceName: env.OTEL_SERVICE_NAME?.trim() || '',
    resourceAttributes: parseKeyValues(env.OTEL_RESOURCE_ATTRIBUTES),
    sampler: env.OTEL_TRACES_SAMPLER?.trim() || 'parentbased_always_on',
    samplerArg: Number(env.OTEL_TRACES_SAMPLER_ARG ?? '1'),
    maxQueueSize,
    maxExportBatchSize: Math.min(maxQueueSize, integer(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512, 1, 1_000_000)),
    scheduleDelayMs: integer(env, 'OTEL_BSP_SCHEDULE_DELAY', 5000, 0, 3_600_000),
    exportTimeoutMs: integer(env, 'OTEL_BSP_EXPORT_TIMEOUT', 30_000, 1, 3_600_000),
    captureContent: env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.trim().toLowerCase() === 'true',
  }
}
