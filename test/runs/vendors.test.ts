// Vendor agents through the real API on both databases: a run whose phase's agent is each vendor (a local
// server speaking its wire format) answers; a revision reaches the vendor with the operator's note; a wrong
// key fails the run with agent-rejected (the key nowhere in it); missing config is agent-unavailable. Every call
// to a vendor carries the trace of the request that started the run.
import { after, before, describe, it } from 'node:test'
import type { IncomingHttpHeaders } from 'node:http'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { startAnthropicFake } from '../fakes/vendors/anthropic.js'
import { SECRET } from '../fakes/vendors/context.js'
import { startCursorFake } from '../fakes/vendors/cursor.js'
import { startDirectLineFake } from '../fakes/vendors/direct-line.js'
import { startElevenLabsFake } from '../fakes/vendors/elevenlabs.js'
import type { Exchange } from '../fakes/vendors/http.js'
import { startMistralFake } from '../fakes/vendors/mistral.js'
import { createAgent, createCycle, createStream, runIn, startRun } from './setup.js'

export async function createCredential(app: FastifyInstance, secret: string): Promise<string> {
  const res = await send(app, 'POST', '/api/credentials', { name: 'vendor key', secret })
  assert.equal(res.statusCode, 201, res.body)
  return res.json().id
}

interface Fakes {
  anthropic: Awaited<ReturnType<typeof startAnthropicFake>>
  mistral: Awaited<ReturnType<typeof startMistralFake>>
  elevenlabs: Awaited<ReturnType<typeof startElevenLabsFake>>
  directLine: Awaited<ReturnType<typeof startDirectLineFake>>
  cursor: Awaited<ReturnType<typeof startCursorFake>>
}

interface VendorCase {
  providerType: string
  agent: (f: Fakes) => Record<string, unknown>
  /** Scripts the vendor's next answer. */
  answer: (f: Fakes, text: string) => void
  /** The text the vendor received last (the prompt). */
  received: (f: Fakes) => string
  credential: boolean
  /** The headers of every call the vendor received so far (HTTP requests, WebSocket handshakes). */
  calls: (f: Fakes) => IncomingHttpHeaders[]
  /** The phase output for a scripted answer (default: the answer itself). */
  output?: (text: string) => string
}

const lastBody = (requests: Exchange[], path: RegExp) => requests.filter((r) => path.test(r.path) && r.method === 'POST').at(-1)?.body

const cases: VendorCase[] = [
  {
    providerType: 'claude',
    credential: true,
    agent: (f) => ({ authMode: 'api_key', endpointUrl: f.anthropic.base, config: { model: 'claude-test-1' } }),
    answer: (f, text) => f.anthropic.steps.set({ text }),
    received: (f) => {
      const body = lastBody(f.anthropic.requests, /messages$/)
      return `${JSON.stringify(body.system)} ${body.messages[0].content.map((c: any) => c.text).join('')}`
    },
    calls: (f) => f.anthropic.requests.map((r) => r.headers),
  },
  {
    providerType: 'mistral',
    credential: true,
    agent: (f) => ({ authMode: 'api_key', endpointUrl: f.mistral.base, config: { model: 'mistral-test-1' } }),
    answer: (f, text) => f.mistral.steps.set({ text }),
    received: (f) => JSON.stringify(lastBody(f.mistral.requests, /chat\/completions$/).messages),
    calls: (f) => f.mistral.requests.map((r) => r.headers),
  },
  {
    providerType: 'elevenlabs',
    credential: true,
    agent: (f) => ({ authMode: 'api_key', endpointUrl: f.elevenlabs.url, config: { agentId: 'agent_7' } }),
    answer: (f, text) => f.elevenlabs.steps.set({ text }),
    received: (f) => f.elevenlabs.received.at(-1)!.find((m) => m.type === 'user_message').text,
    calls: (f) => [...f.elevenlabs.requests, ...f.elevenlabs.connections].map((r) => r.headers),
  },
  {
    providerType: 'copilot_studio',
    credential: true,
    agent: (f) => ({ authMode: 'direct_line', endpointUrl: f.directLine.url }),
    answer: (f, text) => {
      f.directLine.bot.replies = [text]
      f.directLine.bot.looksBeforeReply = 2
    },
    received: (f) => lastBody(f.directLine.requests, /activities$/).text,
    calls: (f) => f.directLine.requests.map((r) => r.headers),
  },
  {
    providerType: 'cursor',
    credential: true,
    agent: (f) => ({ authMode: 'api_key', endpointUrl: f.cursor.url, config: { repository: 'https://github.com/acme/app', ref: 'main' } }),
    answer: (f, text) => {
      f.cursor.launches.set({ agentStatus: 'CREATING' })
      f.cursor.looks.set({ agentStatus: 'RUNNING' }, { agentStatus: 'FINISHED', summary: text, prUrl: 'https://github.com/acme/app/pull/9' })
    },
    output: (text) => `${text}\n\nPull request: https://github.com/acme/app/pull/9`,
    received: (f) => lastBody(f.cursor.requests, /\/v0\/agents$/).prompt.text,
    calls: (f) => f.cursor.requests.map((r) => r.headers),
  },
]

for (const dialect of dialects()) {
  describe(`vendor agents in runs (${dialect})`, () => {
    let app: FastifyInstance
    let streamId: string
    const fakes = {} as Fakes

    before(async () => {
      app = await build(dialect, { TANDEM_WORKERS: '4', TANDEM_POLL_INTERVAL_MS: '100', TANDEM_DISPATCH_ATTEMPTS: '2', TANDEM_EGRESS_ALLOW: '127.0.0.0/8' }, { ownDatabase: true })
      fakes.anthropic = await startAnthropicFake(SECRET)
      fakes.mistral = await startMistralFake(SECRET)
      fakes.elevenlabs = await startElevenLabsFake(SECRET)
      fakes.directLine = await startDirectLineFake(SECRET)
      fakes.cursor = await startCursorFake(SECRET)
      streamId = await createStream(app)
    })
    after(async () => {
      await app.close()
      await Promise.all(Object.values(fakes).map((f) => f.close()))
    })

    for (const c of cases) {
      it(`${c.providerType}: the agent answers its phase, and a revision reaches it with the operator's note`, { timeout: 60000 }, async () => {
        const credentialId = c.credential ? await createCredential(app, SECRET) : undefined
        const agentId = await createAgent(app, { name: `${c.providerType} agent`, providerType: c.providerType, instructions: 'You triage tickets.', credentialId, ...c.agent(fakes) })
        const cycleId = await createCycle(app, streamId, [{ agentId, autoAdvance: false, name: 'Triage' }])
        c.answer(fakes, `first answer from ${c.providerType}`)
        const earlier = c.calls(fakes).length
        const run = await startRun(app, streamId, cycleId, { ticket: 'T-42' }, { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' })
        const waiting = await runIn(app, run.id, ['waiting', 'failed'], 30000)
        assert.equal(waiting.status, 'waiting', JSON.stringify(waiting.error))
        const phase = waiting.phases[0]
        const output = c.output ?? ((text: string) => text)
        assert.equal(phase.output.text, output(`first answer from ${c.providerType}`))
        const message = (await send(app, 'GET', `/api/chat/messages/${phase.output.messageId}`)).json()
        assert.equal(message.authorType, 'agent')
        assert.equal(message.authorId, agentId)
        const prompt = c.received(fakes)
        assert.match(prompt, /You triage tickets\./)
        assert.match(prompt, /goal 0/)
        assert.match(prompt, /T-42/)

        c.answer(fakes, `revised answer from ${c.providerType}`)
        const revise = await send(app, 'POST', `/api/runs/${run.id}/phases/${phase.id}/decision`, { decision: 'revise', note: 'Mention the SLA, please.' })
        assert.equal(revise.statusCode, 200, revise.body)
        const revised = await runIn(app, run.id, ['waiting', 'failed'], 30000)
        assert.equal(revised.phases[0].output?.text, output(`revised answer from ${c.providerType}`), JSON.stringify(revised.error))
        assert.match(c.received(fakes), /Mention the SLA, please\./)
        const calls = c.calls(fakes).slice(earlier)
        assert.ok(calls.length >= 2)
        for (const headers of calls) assert.match(String(headers.traceparent), /^00-0af7651916cd43dd8448eb211c80319c-(?!b7ad6b7169203331)[0-9a-f]{16}-01$/)
        const approve = await send(app, 'POST', `/api/runs/${run.id}/phases/${phase.id}/decision`, { decision: 'approve' })
        assert.equal(approve.statusCode, 200, approve.body)
        assert.equal(approve.json().status, 'succeeded')
      })
    }

    it('a public ElevenLabs agent needs no credential', { timeout: 30000 }, async () => {
      const agentId = await createAgent(app, { name: 'public voice agent', providerType: 'elevenlabs', authMode: 'none', endpointUrl: fakes.elevenlabs.url, config: { agentId: 'agent_public' } })
      const cycleId = await createCycle(app, streamId, [{ agentId, autoAdvance: true }])
      fakes.elevenlabs.steps.set({ text: 'public answer' })
      const run = await startRun(app, streamId, cycleId)
      const done = await runIn(app, run.id, ['succeeded', 'failed'], 20000)
      assert.equal(done.status, 'succeeded', JSON.stringify(done.error))
      assert.equal(done.phases[0].output.text, 'public answer')
      assert.match(fakes.elevenlabs.connections.at(-1)!.url, /agent_id=agent_public/)
    })

    it('a wrong key fails the run with agent-rejected, and the key is nowhere in it', { timeout: 30000 }, async () => {
      const wrong = 'sk-wrong-0123456789abcdef'
      const credentialId = await createCredential(app, wrong)
      const agentId = await createAgent(app, { name: 'bad key', providerType: 'claude', authMode: 'api_key', credentialId, endpointUrl: fakes.anthropic.base, config: { model: 'claude-test-1' } })
      const cycleId = await createCycle(app, streamId, [{ agentId }])
      const run = await startRun(app, streamId, cycleId)
      const failed = await runIn(app, run.id, ['failed', 'succeeded'], 20000)
      assert.equal(failed.status, 'failed')
      assert.equal(failed.error.type, 'urn:tandem:problem:agent-rejected')
      const events = await send(app, 'GET', `/api/streams/${streamId}/events?after=0`, undefined, { accept: 'application/json' })
      assert.doesNotMatch(JSON.stringify(failed) + events.body, /sk-wrong-0123456789abcdef/)
    })

    it('a vendor that keeps failing ends with agent-unreachable after the configured attempts', { timeout: 30000 }, async () => {
      const credentialId = await createCredential(app, SECRET)
      const agentId = await createAgent(app, { name: 'overloaded', providerType: 'mistral', authMode: 'api_key', credentialId, endpointUrl: fakes.mistral.base, config: { model: 'mistral-test-1' } })
      const cycleId = await createCycle(app, streamId, [{ agentId }])
      fakes.mistral.steps.set({ status: 503 })
      const before = fakes.mistral.requests.length
      const run = await startRun(app, streamId, cycleId)
      const failed = await runIn(app, run.id, ['failed', 'succeeded'], 20000)
      assert.equal(failed.error.type, 'urn:tandem:problem:agent-unreachable')
      assert.equal(fakes.mistral.requests.length - before, 2, 'TANDEM_DISPATCH_ATTEMPTS deliveries')
    })

    it('missing config fails the run at once with agent-unavailable naming what is missing', async () => {
      const credentialId = await createCredential(app, SECRET)
      for (const [providerType, missing] of [['claude', /config\.model/], ['mistral', /config\.model/], ['elevenlabs', /config\.agentId/], ['cursor', /config\.repository/]] as const) {
        const agentId = await createAgent(app, { name: `${providerType} without config`, providerType, authMode: 'api_key', credentialId, endpointUrl: 'http://127.0.0.1:1' })
        const cycleId = await createCycle(app, streamId, [{ agentId }])
        const run = await startRun(app, streamId, cycleId)
        const failed = await runIn(app, run.id, ['failed', 'succeeded'], 20000)
        assert.equal(failed.error.type, 'urn:tandem:problem:agent-unavailable', providerType)
        assert.match(failed.error.detail, missing)
      }
      const agentId = await createAgent(app, { name: 'direct line without secret', providerType: 'copilot_studio', authMode: 'direct_line', endpointUrl: 'http://127.0.0.1:1' })
      const run = await startRun(app, streamId, await createCycle(app, streamId, [{ agentId }]))
      const failed = await runIn(app, run.id, ['failed', 'succeeded'], 20000)
      assert.equal(failed.error.type, 'urn:tandem:problem:agent-misconfigured')
      assert.match(failed.error.detail, /Direct Line secret/)
    })
  })
}
