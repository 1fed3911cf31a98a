// A server killed (SIGKILL) in the middle of a delivery loses nothing: the task is delivered again with the same
// webhook-id, in the trace of the request that started the run, and the run finishes, with one output. SQLite: the restarted process resumes it. PostgreSQL: a
// second instance, already running, takes it over when the dead one's delivery lease ends; a task is never
// being delivered twice at the same time.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createInterface } from 'node:readline'
import { randomUUID } from 'node:crypto'
import { TEST_SECRET_KEY, dialects, freshDatabase } from '../helpers.js'
import { waitFor } from './agent-server.js'

function startServer(databaseUrl: string): { child: ChildProcess; url: Promise<string> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: {
      ...process.env, PORT: '0', LOG_LEVEL: 'info', DATABASE_URL: databaseUrl, TANDEM_AUTH: 'local', TANDEM_EGRESS_ALLOW: '127.0.0.0/8',
      TANDEM_DISPATCH_TIMEOUT_MS: '3000', TANDEM_SECRET_KEY: TEST_SECRET_KEY,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const url = new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = /Tandem listening on (http:\/\/[^"\s]+)/.exec(line)
      if (match) resolve(match[1] as string)
    })
    child.on('exit', (code) => reject(new Error(`server exited with ${code}`)))
  })
  return { child, url }
}

async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(base + path, { method, headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...headers }, body: body ? JSON.stringify(body) : undefined })
  return { status: res.status, json: (await res.json().catch(() => null)) as any }
}

const stop = async (child: ChildProcess) => {
  if (child.exitCode !== null || child.signalCode !== null) return
  child.kill('SIGTERM')
  await once(child, 'exit')
}

for (const dialect of dialects()) {
  describe(`runs survive a SIGKILL mid-delivery (${dialect})`, () => {
    it('delivers the task again with the same webhook-id and finishes the run once', { timeout: 120000 }, async () => {
      const database = await freshDatabase(dialect, { ownDatabase: true })
      const deliveries: string[] = []
      const traces: string[] = []
      let inFlight = 0
      let maxInFlight = 0
      const agent = createServer((req, res) => {
        const chunks: Buffer[] = []
        req.on('data', (c) => chunks.push(c))
        req.on('end', () => {
          deliveries.push(String(req.headers['webhook-id']))
          traces.push(String(req.headers.traceparent))
          inFlight++
          maxInFlight = Math.max(maxInFlight, inFlight)
          res.on('close', () => inFlight--)
          if (deliveries.length === 1) return // the first delivery hangs: the server is killed meanwhile
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ output: { text: 'after the crash' } }))
        })
      })
      await new Promise<void>((resolve) => agent.listen(0, '127.0.0.1', resolve))
      const endpointUrl = `http://127.0.0.1:${(agent.address() as AddressInfo).port}/hook`
      const children: ChildProcess[] = []
      try {
        const first = startServer(database.url)
        children.push(first.child)
        const base = await first.url
        const agentId = (await call(base, 'POST', '/api/agents', { name: 'Crash agent', endpointUrl })).json.id
        const streamId = (await call(base, 'POST', '/api/streams', { name: 'crash' })).json.id
        const phase = { id: randomUUID(), agentId, goal: 'g', instructions: 'i', autoAdvance: true, phaseName: 'Only', operatorPool: [] }
        const cycleId = (await call(base, 'POST', `/api/cycles/streams/${streamId}/cycles`, { triggerName: 't', description: 'd', phasesTemplate: [phase] })).json.id
        const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'
        const run = (await call(base, 'POST', `/api/cycles/streams/${streamId}/cycles/${cycleId}/runs`, {}, { traceparent })).json
        await waitFor(() => deliveries.length >= 1, 20000, 'the first delivery')

        // PostgreSQL: another instance is up before the first dies; SQLite: one process, restarted.
        let survivor: { child: ChildProcess; url: Promise<string> } | undefined
        if (dialect === 'postgres') {
          survivor = startServer(database.url)
          children.push(survivor.child)
          await survivor.url
        }
        first.child.kill('SIGKILL')
        await once(first.child, 'exit')
        if (!survivor) {
          survivor = startServer(database.url)
          children.push(survivor.child)
        }
        const again = await survivor.url
        const done = await waitFor(async () => {
          const current = (await call(again, 'GET', `/api/runs/${run.id}`)).json
          return current.status === 'succeeded' ? current : undefined
        }, 60000, 'the run to succeed after the crash')
        assert.ok(deliveries.length >= 2)
        assert.equal(new Set(deliveries).size, 1, 'every delivery carries the same webhook-id (the task id)')
        assert.equal(maxInFlight, 1, 'never delivered twice at the same time')
        for (const sent of traces) assert.match(sent, /^00-4bf92f3577b34da6a3ce929d0e0e4736-(?!00f067aa0ba902b7)[0-9a-f]{16}-01$/, 'the run\'s trace, stored, outlives the process')
        assert.equal(done.phases[0].attempts, 1)
        assert.equal(done.phases[0].output.text, 'after the crash')
        const messages = (await call(again, 'GET', `/api/chat/streams/${streamId}/messages`)).json.data
        assert.equal(messages.filter((m: any) => m.authorType === 'agent').length, 1, 'the output is posted once')
        console.log(`crash test (${dialect}): ${deliveries.length} deliveries of one task across a SIGKILL; the run finished once`)
      } finally {
        for (const child of children) await stop(child)
        agent.closeAllConnections()
        agent.close()
        await database.drop()
      }
    })
  })
}
