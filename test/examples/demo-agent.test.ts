// The demo agent (examples/demo-agent.mjs), as a real process on 127.0.0.1: a run of a cycle whose phase goes
// to it reaches the gate with its answer, on each database; a delivery signed with another secret is refused
// (401, so the phase fails as agent-rejected) and an unsigned request too; a task delivered again with the same
// webhook-id gets the same answer.
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:net'
import { createInterface } from 'node:readline'
import type { FastifyInstance } from 'fastify'
import { Webhook } from 'standardwebhooks'
import { build, dialects, send } from '../helpers.js'
import { createCycle, createStream, runIn, startRun } from '../runs/setup.js'

const secret = `whsec_${randomBytes(24).toString('base64')}`

async function startDemoAgent(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['examples/demo-agent.mjs'], { env: { ...process.env, DEMO_AGENT_SECRET: secret, DEMO_AGENT_PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] })
  child.stderr!.resume()
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = /listening on (http:\/\/\S+)/.exec(line)
      if (match) resolve(match[1] as string)
    })
    child.once('exit', (code) => reject(new Error(`the demo agent exited (${code})`)))
  })
  return { child, url }
}

describe('the demo agent', () => {
  let agent: { child: ChildProcess; url: string }
  before(async () => {
    agent = await startDemoAgent()
  })
  after(async () => {
    agent.child.kill('SIGTERM')
    if (agent.child.exitCode === null) await once(agent.child, 'exit')
  })

  it('refuses an unsigned request and one signed with another secret, and answers a task delivered again the same way', async () => {
    const body = JSON.stringify({ task: { id: 'task-1' }, run: { id: 'run-1', input: {} }, phase: { phaseName: 'P', instructions: 'Do it', feedback: null }, messages: [] })
    const post = (headers: Record<string, string>) => fetch(agent.url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body })
    const signed = (key: string) => {
      const at = new Date()
      return { 'webhook-id': 'task-1', 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': new Webhook(key).sign('task-1', at, body) }
    }
    assert.equal((await post({})).status, 401)
    assert.equal((await post(signed(`whsec_${randomBytes(24).toString('base64')}`))).status, 401)
    const first = await post(signed(secret))
    assert.equal(first.status, 200)
    const answer = (await first.json()) as { output: { text: string } }
    assert.match(answer.output.text, /I read the phase "P"/)
    assert.deepEqual(await (await post(signed(secret))).json(), answer)
  })

  it('quotes the latest person\'s message, never its own earlier answers (answers do not nest and grow)', async () => {
    const earlier = 'Demo agent: I read the phase "P".\nLatest message in the stream: A customer asks for a refund'
    const body = JSON.stringify({
      task: { id: 'task-2' }, run: { id: 'run-2', input: {} }, phase: { phaseName: 'P', instructions: '', feedback: null },
      messages: [{ authorType: 'principal', text: 'A customer asks for a refund' }, { authorType: 'agent', text: earlier }],
    })
    const at = new Date()
    const headers = { 'content-type': 'application/json', 'webhook-id': 'task-2', 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': new Webhook(secret).sign('task-2', at, body) }
    const answer = (await (await fetch(agent.url, { method: 'POST', headers, body })).json()) as { output: { text: string } }
    assert.match(answer.output.text, /Latest message in the stream: A customer asks for a refund$/)
    assert.equal(answer.output.text.match(/Demo agent:/g)?.length, 1, 'its own earlier answer is not quoted')
  })

  it('a malformed whsec_ secret and a busy port are refused in one line each, naming the variable', async () => {
    const run = (env: Record<string, string>) => spawnSync(process.execPath, ['examples/demo-agent.mjs'], { encoding: 'utf8', timeout: 30_000, env: { ...process.env, ...env } })
    const malformed = run({ DEMO_AGENT_SECRET: 'whsec_abc', DEMO_AGENT_PORT: '0' })
    assert.equal(malformed.status, 1)
    assert.match(malformed.stderr, /^demo-agent: DEMO_AGENT_SECRET is not a whsec_ key [^\n]*\n$/)
    const busy = createServer().listen(0, '127.0.0.1')
    await once(busy, 'listening')
    try {
      const port = String((busy.address() as { port: number }).port)
      const taken = run({ DEMO_AGENT_SECRET: secret, DEMO_AGENT_PORT: port })
      assert.equal(taken.status, 1)
      assert.equal(taken.stderr, `demo-agent: cannot listen on 127.0.0.1:${port} (EADDRINUSE); set DEMO_AGENT_PORT to a free port\n`)
    } finally {
      busy.close()
    }
  })

  for (const dialect of dialects()) {
    describe(dialect, () => {
      let app: FastifyInstance
      before(async () => {
        app = await build(dialect, { TANDEM_WORKERS: '4', TANDEM_EGRESS_ALLOW: '127.0.0.0/8', TANDEM_DISPATCH_ATTEMPTS: '1' }, { ownDatabase: true })
      })
      after(() => app.close())

      const agentWith = async (key: string) => {
        const credential = await send(app, 'POST', '/api/credentials', { name: 'demo', secret: key })
        assert.equal(credential.statusCode, 201, credential.body)
        const created = await send(app, 'POST', '/api/agents', { name: 'Summariser', providerType: 'custom_webhook', endpointUrl: agent.url, credentialId: credential.json().id })
        assert.equal(created.statusCode, 201, created.body)
        return created.json().id as string
      }

      it('a run reaches the gate with the demo agent\'s answer, posted in the stream', async () => {
        const stream = await createStream(app)
        const cycle = await createCycle(app, stream, [{ agentId: await agentWith(secret), autoAdvance: false, operatorPool: ['local'], name: 'Summarise' }])
        const run = await runIn(app, (await startRun(app, stream, cycle, { ticket: 7 })).id, 'waiting')
        assert.equal(run.phases[0].status, 'awaiting_decision')
        assert.match(run.phases[0].output.text, /^Demo agent: I read the phase "Summarise"\.\nInstructions: instructions 0\nInput: \{"ticket":7\}$/)
        const messages = (await send(app, 'GET', `/api/chat/streams/${stream}/messages`)).json().data
        assert.equal(messages.at(-1).authorType, 'agent')
        const decided = await send(app, 'POST', `/api/runs/${run.id}/phases/${run.phases[0].id}/decision`, { decision: 'approve' })
        assert.equal(decided.json().status, 'succeeded')
      })

      it('an agent whose credential holds another secret: the demo agent refuses, the phase fails as agent-rejected', async () => {
        const stream = await createStream(app)
        const cycle = await createCycle(app, stream, [{ agentId: await agentWith(`whsec_${randomBytes(24).toString('base64')}`) }])
        const run = await runIn(app, (await startRun(app, stream, cycle)).id, 'failed')
        assert.equal(run.error.type, 'urn:tandem:problem:agent-rejected')
        assert.match(run.error.detail, /401/)
      })
    })
  }
})
