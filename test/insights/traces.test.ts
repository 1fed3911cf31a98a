// Traces (docs/insights.md): with an OTLP endpoint set, the spans of a history of runs reach a local OTLP/HTTP
// receiver (JSON here, protobuf once) — names, kinds, attributes and parentage: the caller's traceparent is
// continued, each run is one trace (invoke_workflow under the starting request, invoke_agent under it,
// execute_tool under its task, tandem.wait under the run or the call) — and no secret or text is in any span.
// Off by default: no endpoint, no tracing.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { randomUUID } from 'node:crypto'
import { rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { build, dialects, send, TEST_SECRET_KEY } from '../helpers.js'
import { buildApp } from '../../src/app.js'
import { createApiKey } from '../../src/principals/store.js'
import { waitFor } from '../runs/agent-server.js'
import { buildHistory, type History } from './history.js'
import { loadConfig } from '../../src/config.js'
import { derivedSpanId } from '../../src/tracing/ids.js'
import { attr, startOtlpReceiver, type OtlpReceiver } from './otlp.js'
import { itReadsNoWholeGrowingTable, watchFullScans, type FullScans } from '../db/full-scans.js'


it('tracing is off without an OTLP endpoint, and with OTEL_SDK_DISABLED', () => {
  assert.equal(loadConfig({ DATABASE_URL: 'sqlite::memory:' }).tracing, null)
  assert.equal(loadConfig({ DATABASE_URL: 'sqlite::memory:', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' }).tracing, null)
  assert.throws(() => loadConfig({ DATABASE_URL: 'sqlite::memory:', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }), /OTEL_EXPORTER_OTLP_PROTOCOL/)
  const on = loadConfig({ DATABASE_URL: 'sqlite::memory:', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318/', OTEL_EXPORTER_OTLP_HEADERS: 'x-team=a%20b' })
  assert.equal(on.tracing?.url, 'http://127.0.0.1:4318/v1/traces')
  assert.deepEqual(on.tracing?.headers, { 'x-team': 'a b' })
})

for (const dialect of dialects()) {
  describe(`traces (${dialect})`, () => {
    let app: FastifyInstance
    let otlp: OtlpReceiver
    let h: History
    const spans = () => otlp.spans()
    let scans: FullScans | null = null
    before(async () => {
      otlp = await startOtlpReceiver()
      app = await build(dialect, {
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '10',
        OTEL_SERVICE_NAME: 'tandem-test', OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=test',
      })
      scans = watchFullScans(app)
      h = await buildHistory(app)
    })
    after(async () => {
      await app.close()
      otlp.server.close()
    })

    it('one trace per run: the request, invoke_workflow, invoke_agent, execute_tool and the waits, with their attributes', async () => {
      await waitFor(() => spans().filter((s) => s.name.startsWith('invoke_workflow')).length >= 8 || undefined, 10000, 'eight runs\' spans')
      const all = spans()
      const resource = JSON.parse(otlp.received.find((r) => r.type.includes('json'))!.body.toString()).resourceSpans[0].resource.attributes
      assert.ok(resource.some((a: any) => a.key === 'service.name' && a.value.stringValue === 'tandem-test'))
      assert.ok(resource.some((a: any) => a.key === 'deployment.environment' && a.value.stringValue === 'test'))
      const byId = new Map(all.map((s) => [s.spanId, s]))
      const workflows = all.filter((s) => s.name === 'invoke_workflow write')
      assert.equal(workflows.length, 5)
      for (const workflow of workflows) {
        assert.equal(workflow.kind, 1, 'INTERNAL')
        const server = byId.get(workflow.parentSpanId!)
        assert.equal(server?.name, 'POST /api/cycles/streams/:streamId/cycles/:cycleId/runs', 'under the starting request')
        assert.equal(server?.kind, 2, 'SERVER')
        assert.equal(server?.traceId, workflow.traceId)
        assert.equal(attr(workflow, 'gen_ai.operation.name'), 'invoke_workflow')
        assert.equal(attr(workflow, 'gen_ai.workflow.name'), 'write')
        assert.equal(attr(workflow, 'tandem.cycle.id'), h.cycles.a)
        const runId = attr(workflow, 'tandem.run.id') as string
        assert.equal(workflow.spanId, derivedSpanId('invoke_workflow', runId))
      }
      assert.equal(workflows.filter((w) => w.status?.code === 2).length, 1, 'the failed run is an error')
      const agents = all.filter((s) => s.name === 'invoke_agent Writer')
      assert.equal(agents.length, 8, 'one per attempt (the revised run had two)')
      for (const agent of agents) {
        assert.equal(agent.kind, 3, 'CLIENT')
        assert.equal(byId.get(agent.parentSpanId!)?.name.startsWith('invoke_workflow'), true)
        assert.equal(attr(agent, 'gen_ai.provider.name'), 'tandem.custom_token_only')
        assert.equal(attr(agent, 'gen_ai.agent.id'), h.writerId)
      }
      const failed = agents.find((a) => a.status?.code === 2)
      assert.equal(attr(failed!, 'error.type'), 'agent-failed')
      assert.ok(agents.some((a) => attr(a, 'gen_ai.usage.input_tokens') === 100 && attr(a, 'gen_ai.usage.output_tokens') === 20))
      const tools = all.filter((s) => s.name.startsWith('execute_tool'))
      assert.equal(tools.length, 5)
      const task = byId.get(tools[0]!.parentSpanId!)
      assert.equal(task?.name, 'invoke_agent Writer')
      assert.deepEqual(tools.map((t) => attr(t, 'gen_ai.tool.type')).sort(), ['extension', 'extension', 'extension', 'extension', 'function'])
      assert.equal(tools.filter((t) => t.status?.code === 2).length, 1)
      const waits = all.filter((s) => s.name === 'tandem.wait decision')
      assert.deepEqual(waits.map((w) => attr(w, 'tandem.wait.outcome')).sort(), ['approve', 'approve', 'approve', 'cancel', 'expire', 'reject', 'revise'])
      const quorum = waits.find((w) => attr(w, 'tandem.wait.outcome') === 'approve' && (attr(w, 'tandem.wait.decided_by') as string[]).length === 2)
      assert.deepEqual(attr(quorum!, 'tandem.wait.decided_by'), ['maria', 'tom'])
      assert.equal(byId.get(quorum!.parentSpanId!)?.name, 'invoke_workflow write')
      assert.deepEqual(attr(waits.find((w) => attr(w, 'tandem.wait.outcome') === 'expire')!, 'tandem.wait.decided_by'), ['system'])
      const text = otlp.received.map((r) => r.body.toString()).join('\n')
      for (const secret of ['do-not-leak', 'tdt_', 'tdk_', '"secret":"s"', 'off-brand', 'shorter', 'draft']) assert.equal(text.includes(secret), false, `no ${secret} in spans`)
    })

    it('continues the caller\'s traceparent', async () => {
      const traceId = '4bf92f3577b34da6a3ce929d0e0e4736'
      const res = await send(app, 'POST', `/api/cycles/streams/${h.streamId}/cycles/${h.cycles.c}/runs`, {}, { traceparent: `00-${traceId}-00f067aa0ba902b7-01` })
      assert.equal(res.statusCode, 201)
      const server = await waitFor(() => spans().find((s) => s.traceId === traceId && s.kind === 2), 10000, 'the request span')
      assert.equal(server.parentSpanId, '00f067aa0ba902b7')
      const claim = await send(app, 'POST', '/api/tasks/claim', {}, h.writerKey)
      await send(app, 'POST', `/api/tasks/${claim.json().task.id}/result`, { output: { text: 'x' } }, { authorization: `Bearer ${claim.json().result.token}` })
      const workflow = await waitFor(() => spans().find((s) => s.traceId === traceId && s.name === 'invoke_workflow auto'), 10000, 'the run in the caller\'s trace')
      assert.equal(workflow.parentSpanId, server.spanId)
      const agent = await waitFor(() => spans().find((s) => s.traceId === traceId && s.name.startsWith('invoke_agent')), 10000, 'its task')
      assert.equal(agent.parentSpanId, workflow.spanId)
    })

    // Last: after every flow above, what they read.
    if (dialect === 'sqlite') itReadsNoWholeGrowingTable(() => scans)
  })
}

it('exports OTLP/HTTP protobuf by default', async () => {
  const otlp = await startOtlpReceiver()
  const app = await build('sqlite', { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${otlp.url}/custom/traces`, OTEL_BSP_SCHEDULE_DELAY: '10' })
  try {
    assert.equal((await send(app, 'GET', '/api/me')).statusCode, 200)
    const body = await waitFor(() => otlp.received.find((r) => r.type === 'application/x-protobuf'), 10000, 'a protobuf export')
    assert.ok(body.body.includes(Buffer.from('GET /api/me')), 'the server span, named by its route')
  } finally {
    await app.close()
    otlp.server.close()
  }
})

it('a full export queue drops spans and counts them; requests go on', async () => {
  const app = await build('sqlite', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_BSP_MAX_QUEUE_SIZE: '2', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '2', OTEL_BSP_SCHEDULE_DELAY: '600000', OTEL_EXPORTER_OTLP_TIMEOUT: '200', OTEL_BSP_EXPORT_TIMEOUT: '300' })
  try {
    for (let i = 0; i < 5; i++) assert.equal((await send(app, 'GET', '/api/me')).statusCode, 200)
    const metrics = (await send(app, 'GET', '/metrics')).body
    const dropped = Number(/^tandem_trace_spans_dropped_total\{reason="queue_full"\} (\d+)/m.exec(metrics)?.[1])
    assert.ok(dropped >= 1, metrics.split('\n').filter((l) => l.includes('dropped')).join('\n'))
  } finally {
    await app.close()
  }
})

it('a restart mid-run keeps the run in its trace: another process ends it under the starting request', async () => {
  const otlp = await startOtlpReceiver()
  const file = join(tmpdir(), `tandem-trace-restart-${process.pid}.db`)
  const env = { LOG_LEVEL: 'silent', TANDEM_WORKERS: '0', TANDEM_SECRET_KEY: TEST_SECRET_KEY, DATABASE_URL: `sqlite:${file}` }
  const traced = { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '10' }
  const traceId = '0af7651916cd43dd8448eb211c80319c'
  try {
    const first = await buildApp(loadConfig(env))
    const { workspaceId } = (await send(first, 'GET', '/api/me')).json()
    const agentId = (await send(first, 'POST', '/api/agents', { name: 'Late', providerType: 'custom_token_only' })).json().id
    const streamId = (await send(first, 'POST', '/api/streams', { name: 'Restart' })).json().id
    const cycle = await send(first, 'POST', `/api/cycles/streams/${streamId}/cycles`, {
      triggerName: 'later', description: 'd', phasesTemplate: [{ id: randomUUID(), agentId, goal: 'g', instructions: 'i', autoAdvance: true, phaseName: 'P', operatorPool: [] }],
    })
    await send(first, 'POST', `/api/cycles/streams/${streamId}/cycles/${cycle.json().id}/runs`, {}, { traceparent: `00-${traceId}-b7ad6b7169203331-01` })
    const key = (await createApiKey(first.database.db, { workspaceId, name: 'late', agentId })).key
    await first.close()
    const second = await buildApp(loadConfig(traced))
    try {
      const claim = (await send(second, 'POST', '/api/tasks/claim', {}, { authorization: `Bearer ${key}` })).json()
      await send(second, 'POST', `/api/tasks/${claim.task.id}/result`, { output: { text: 'done' } }, { authorization: `Bearer ${claim.result.token}` })
      const all = () => otlp.spans()
      const workflow = await waitFor(() => all().find((s) => s.name === 'invoke_workflow later'), 10000, 'the run\'s span from the second process')
      assert.equal(workflow.traceId, traceId)
      assert.ok(workflow.parentSpanId && workflow.parentSpanId !== 'b7ad6b7169203331', 'under the first process\'s request span')
      const agent = await waitFor(() => all().find((s) => s.name === 'invoke_agent Late'), 10000, 'the task span')
      assert.equal(agent.parentSpanId, workflow.spanId)
      assert.equal(agent.traceId, traceId)
    } finally {
      await second.close()
    }
  } finally {
    otlp.server.close()
    for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true })
  }
})
