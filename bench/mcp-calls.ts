// Latency of MCP tool calls through the official SDK client against a listening server on SQLite (one session):
// `whoami` (an in-process call of GET /api/me), `list_inbox` with 20 waiting decisions, and `decide_phase` (the
// service function, one transaction). Prints the median and p95 in ms. Run: npx tsx bench/mcp-calls.ts
import { randomUUID } from 'node:crypto'
import { rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'

const file = join(tmpdir(), `tandem-mcp-bench-${randomUUID()}.db`)
const app = await buildApp(loadConfig({ LOG_LEVEL: 'silent', TANDEM_WORKERS: '2', DATABASE_URL: `sqlite:${file}`, TANDEM_SECRET_KEY: Buffer.alloc(32, 7).toString('base64') }))
const address = await app.listen({ port: 0, host: '127.0.0.1' })
const send = async (method: 'GET' | 'POST', url: string, body?: unknown) => (await app.inject({ method, url, ...(body ? { payload: body } : {}) })).json()

const stream = await send('POST', '/api/streams', { name: 'Bench' })
const cycle = await send('POST', `/api/cycles/streams/${stream.id}/cycles`, {
  triggerName: 'gate', description: 'A gate',
  phasesTemplate: [{ id: randomUUID(), agentId: '00000000-0000-0000-0000-000000000000', goal: 'Check', instructions: 'Check', autoAdvance: false, phaseName: 'Review', operatorPool: [] }],
})
const runs: Array<{ id: string }> = []
for (let i = 0; i < 120; i++) runs.push(await send('POST', `/api/cycles/streams/${stream.id}/cycles/${cycle.id}/runs`, {}))
for (;;) {
  const waiting = await send('GET', `/api/cycles/streams/${stream.id}/runs?status=waiting&limit=100`)
  if (waiting.data.length === 100) break
  await new Promise((r) => setTimeout(r, 100))
}

const client = new Client({ name: 'bench', version: '1' })
await client.connect(new StreamableHTTPClientTransport(new URL(`${address}/mcp`)))
await client.listTools()

async function measure(name: string, n: number, args: (i: number) => Record<string, unknown>) {
  const times: number[] = []
  for (let i = 0; i < n; i++) {
    const start = performance.now()
    const result = await client.callTool({ name, arguments: args(i) })
    times.push(performance.now() - start)
    if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`)
  }
  times.sort((a, b) => a - b)
  console.log(`${name}: n=${n} median ${times[Math.floor(n / 2)]!.toFixed(1)} ms, p95 ${times[Math.floor(n * 0.95)]!.toFixed(1)} ms`)
}

await measure('whoami', 200, () => ({}))
await measure('list_inbox', 100, () => ({ limit: 20 }))
const waiting = (await send('GET', `/api/cycles/streams/${stream.id}/runs?status=waiting&limit=100`)).data as Array<{ id: string; phases: Array<{ id: string }> }>
await measure('decide_phase', 100, (i) => ({ runId: waiting[i]!.id, phaseRunId: waiting[i]!.phases[0]!.id, decision: 'approve' }))
await client.close()
await app.close()
for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true })
