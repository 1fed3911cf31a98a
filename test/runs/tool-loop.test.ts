// The model tool loop in runs, on both databases, through the real clients: local Anthropic and Mistral APIs that
// stream and call tools (test/fakes/vendors/tool-models.ts) and real MCP servers built with the SDK. Covers an
// MCP call and its row and events, approval (pool rule, 409, inbox, exactly one call), deny, ask_operator and its
// answer, Tandem's own tools, and every bound and failure: a tool that does not exist, throws, is down or slow,
// too large an input, too large an output, a model looping on tools, entries that name no tool.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { ensureWorkspace } from '../../src/workspaces/store.js'
import Value from 'typebox/value'
import { eventSchema } from '../../src/events/payloads.js'
import { build, dialects, send } from '../helpers.js'
import { downMcpUrl, startFakeMcpServer, type FakeMcpServer } from '../fakes/mcp-server.js'
import { startAnthropicToolFake, startMistralToolFake, type ToolModelFake, type ToolTurn } from '../fakes/vendors/tool-models.js'
import { createAgent, createCycle, createStream, getRun, runIn, startRun } from './setup.js'
import { waitFor } from './agent-server.js'
import { pendingCount } from '../clock.js'
import { callKey } from '../../src/runs/tool-calls/store.js'
import { createKey } from '../auth.js'
import { openInboxFeed } from '../inbox/feed-client.js'
import { itReadsNoWholeGrowingTable, watchFullScans, type FullScans } from '../db/full-scans.js'

type Vendor = 'claude' | 'mistral'

for (const dialect of dialects()) {
  describe(`tool loop in runs (${dialect})`, () => {
    let app: FastifyInstance
    let streamId: string
    let files: FakeMcpServer
    let slow: FakeMcpServer
    const models = {} as Record<Vendor, ToolModelFake>
    const as: Record<'maria' | 'otto' | 'olga', { authorization: string }> = {} as never
    let scans: FullScans | null = null

    before(async () => {
      app = await build(dialect, { TANDEM_WORKERS: '4', TANDEM_EGRESS_ALLOW: '127.0.0.0/8', TANDEM_TOOL_STEPS: '4', TANDEM_TOOL_TIMEOUT_MS: '1500', TANDEM_DISPATCH_ATTEMPTS: '1' }, { ownDatabase: true })
      models.claude = await startAnthropicToolFake()
      models.mistral = await startMistralToolFake()
      files = await startFakeMcpServer()
      slow = await startFakeMcpServer({ deleteDelayMs: 4000 })
      const workspaceId = (await send(app, 'GET', '/api/me')).json().workspaceId
      const key = async (name: string, handle: string, workspace = workspaceId) =>
        (await createKey(app, { workspaceId: workspace, name, handle })).headers
      as.maria = await key('Maria', 'maria')
      as.otto = await key('Otto', 'otto')
      as.olga = await key('Olga', 'olga', await ensureWorkspace(app.database.db, 'elsewhere'))
      for (const [name, url, approval] of [['files', files.url, { 'delete_*': 'always' }], ['slow', slow.url, {}], ['down', await downMcpUrl(), {}]] as const) {
        const res = await send(app, 'POST', '/api/mcp-servers', { name, url, approval })
        assert.equal(res.statusCode, 201, res.body)
      }
      streamId = await createStream(app)
      scans = watchFullScans(app)
    })
    after(async () => {
      await app.close()
      await Promise.all([models.claude.close(), models.mistral.close(), files.close(), slow.close()])
    })

    /** A run of a one-phase cycle whose agent (of `vendor`) has `tools`, the model scripted with `turns`. */
    async function runWith(vendor: Vendor, tools: string[], turns: ToolTurn[]) {
      models[vendor].turns.set(...turns)
      const agentId = await createAgent(app, {
        providerType: vendor, authMode: 'none', endpointUrl: models[vendor].base,
        config: { model: `${vendor}-test` }, capabilities: { streaming: false, tools },
      })
      const cycleId = await createCycle(app, streamId, [{ agentId, operatorPool: ['@maria'] }], `t-${Math.random()}`)
      const before = models[vendor].requests.length
      const run = await startRun(app, streamId, cycleId)
      return { run, requests: () => models[vendor].requests.slice(before) }
    }
    const toolCalls = async (runId: string, headers: Record<string, string> = {}) => (await send(app, 'GET', `/api/runs/${runId}/tool-calls`, undefined, headers)).json().data
    const outputOf = async (run: any) => (await send(app, 'GET', `/api/chat/messages/${run.phases[0].output.messageId}`)).json().text as string

    /** What the model was sent back for its calls: Anthropic tool_result blocks or Mistral tool messages, as text. */
    function toolResults(vendor: Vendor, body: any): string[] {
      if (vendor === 'claude') {
        return body.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : []).filter((c: any) => c.type === 'tool_result').map((c: any) => (typeof c.content === 'string' ? c.content : c.content.map((p: any) => p.text).join(''))))
      }
      return body.messages.filter((m: any) => m.role === 'tool').map((m: any) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)))
    }

    for (const vendor of ['claude', 'mistral'] as const) {
      it(`${vendor}: calls an MCP tool, records it with its events, gives the model the result and answers`, async () => {
        const { run, requests } = await runWith(vendor, ['files.echo', 'tandem.read_messages'], [{ text: 'Let me check.', calls: [{ name: 'files__echo', input: { text: 'hi' } }] }, { text: 'The echo said hi.' }])
        const done = await runIn(app, run.id, 'succeeded')
        assert.equal(await outputOf(done), 'Let me check.\n\nThe echo said hi.')
        const [call, ...rest] = await toolCalls(run.id)
        assert.equal(rest.length, 0)
        assert.deepEqual({ name: call.name, input: call.input, output: call.output, status: call.status, approval: call.approval, attempt: call.attempt, phaseRunId: call.phaseRunId },
          { name: 'files.echo', input: { text: 'hi' }, output: 'echo: hi', status: 'succeeded', approval: null, attempt: 1, phaseRunId: done.phases[0].id })
        const sent = requests()
        assert.equal(sent.length, 2)
        assert.equal(sent[0]!.body.stream, true)
        const offered = vendor === 'claude' ? sent[0]!.body.tools.map((t: any) => t.name) : sent[0]!.body.tools.map((t: any) => t.function.name)
        assert.deepEqual(offered.sort(), ['files__echo', 'tandem__read_messages'])
        assert.deepEqual(toolResults(vendor, sent[1]!.body), ['echo: hi'])
        const events: any[] = []
        for (let query = 'after=0'; ;) {
          const page = (await send(app, 'GET', `/api/streams/${streamId}/events?${query}&limit=100`, undefined, { accept: 'application/json' })).json()
          events.push(...page.data)
          if (!page.nextCursor) break
          query = `cursor=${page.nextCursor}`
        }
        const mine = events.filter((e: any) => e.type.startsWith('tool_call.') && e.data.id === call.id)
        assert.deepEqual(mine.map((e: any) => [e.type, e.data.status]), [['tool_call.created', 'running'], ['tool_call.updated', 'succeeded']])
        for (const event of mine) assert.ok(Value.Check(eventSchema(event.type), event), JSON.stringify([...Value.Errors(eventSchema(event.type), event)].slice(0, 3)))
      })
    }

    it('approval: the phase waits, the pool decides (403 outside, 409 twice), the inbox shows it, the call is made once', async () => {
      const { run, requests } = await runWith('claude', ['files.*'], [{ calls: [{ name: 'files__delete_file', input: { path: '/tmp/a' } }] }, { text: 'Deleted /tmp/a.' }])
      const waiting = await runIn(app, run.id, 'waiting')
      assert.equal(waiting.phases[0].status, 'awaiting_tool_approval')
      const [call] = await toolCalls(run.id)
      assert.equal(call.status, 'awaiting_approval')
      assert.deepEqual(call.approval, { required: true, decision: null, note: null, principalId: null, handle: null, at: null })
      assert.equal(files.calls.filter((c) => c.name === 'delete_file' && (c.arguments as any).path === '/tmp/a').length, 0)

      const inbox = (await send(app, 'GET', '/api/me/inbox', undefined, as.maria)).json().data
      const item = inbox.find((i: any) => i.callId === call.id)
      assert.equal(item.kind, 'tool_approval')
      assert.match(item.summary, /files\.delete_file/)
      assert.match(item.summary, /\/tmp\/a/)
      assert.ok(!(await send(app, 'GET', '/api/me/inbox', undefined, as.otto)).json().data.some((i: any) => i.callId === call.id))

      const url = `/api/runs/${run.id}/tool-calls/${call.id}/decision`
      assert.equal((await send(app, 'POST', url, { decision: 'approve' }, as.otto)).statusCode, 403)
      assert.equal((await send(app, 'POST', url, { decision: 'approve' }, as.olga)).statusCode, 404)
      assert.equal((await send(app, 'GET', `/api/runs/${run.id}/tool-calls`, undefined, as.olga)).statusCode, 404)
      assert.equal((await send(app, 'POST', url, { decision: 'maybe' }, as.maria)).statusCode, 400)
      const approved = await send(app, 'POST', url, { decision: 'approve', note: 'fine' }, as.maria)
      assert.equal(approved.statusCode, 200, approved.body)
      assert.equal(approved.json().approval.handle, 'maria')
      assert.equal((await send(app, 'POST', url, { decision: 'approve' }, as.maria)).statusCode, 409)
      const done = await runIn(app, run.id, 'succeeded')
      assert.equal(await outputOf(done), 'Deleted /tmp/a.')
      assert.equal(files.calls.filter((c) => c.name === 'delete_file' && (c.arguments as any).path === '/tmp/a').length, 1)
      assert.deepEqual(toolResults('claude', requests()[1]!.body), ['deleted /tmp/a'])
      assert.equal((await toolCalls(run.id))[0].status, 'succeeded')
      assert.ok(!(await send(app, 'GET', '/api/me/inbox', undefined, as.maria)).json().data.some((i: any) => i.callId === call.id))
    })

    it('deny: the model is told who denied it and why, the tool is never called, and the loop goes on', async () => {
      const { run, requests } = await runWith('mistral', ['files.delete_file'], [{ calls: [{ name: 'files__delete_file', input: { path: '/tmp/b' } }] }, { text: 'I was not allowed.' }])
      await runIn(app, run.id, 'waiting')
      const [call] = await toolCalls(run.id)
      const denied = await send(app, 'POST', `/api/runs/${run.id}/tool-calls/${call.id}/decision`, { decision: 'deny', note: 'not that file' }, as.maria)
      assert.equal(denied.statusCode, 200, denied.body)
      assert.equal(denied.json().status, 'denied')
      await runIn(app, run.id, 'succeeded')
      assert.deepEqual(toolResults('mistral', requests()[1]!.body), ['denied by @maria: not that file'])
      assert.equal(files.calls.filter((c) => (c.arguments as any).path === '/tmp/b').length, 0)
    })

    it('tandem.ask_operator: the phase awaits input, the question is in the inbox, the answer is the result', async () => {
      const { run, requests } = await runWith('claude', ['tandem.ask_operator'], [{ calls: [{ name: 'tandem__ask_operator', input: { question: 'Which region?' } }] }, { text: 'Deploying to eu-west.' }])
      const waiting = await runIn(app, run.id, 'waiting')
      const phase = waiting.phases[0]
      assert.equal(phase.status, 'awaiting_input')
      const item = (await send(app, 'GET', '/api/me/inbox', undefined, as.maria)).json().data.find((i: any) => i.runId === run.id)
      assert.equal(item.kind, 'question')
      assert.equal(item.summary, 'Which region?')
      const url = `/api/runs/${run.id}/phases/${phase.id}/answer`
      assert.equal((await send(app, 'POST', url, { text: 'eu-west' }, as.otto)).statusCode, 403)
      assert.equal((await send(app, 'POST', url, {}, as.maria)).statusCode, 400)
      const answered = await send(app, 'POST', url, { text: 'eu-west' }, as.maria)
      assert.equal(answered.statusCode, 200, answered.body)
      assert.equal((await send(app, 'POST', url, { text: 'again' }, as.maria)).statusCode, 409)
      await runIn(app, run.id, 'succeeded')
      assert.deepEqual(toolResults('claude', requests()[1]!.body), ['eu-west'])
    })

    it('tandem.post_message posts as the agent; tandem.read_messages reads the stream', async () => {
      const { run, requests } = await runWith('mistral', ['tandem.post_message', 'tandem.read_messages'], [
        { calls: [{ name: 'tandem__post_message', input: { text: 'Working on it…' } }] },
        { calls: [{ name: 'tandem__read_messages', input: { limit: 5 } }] },
        { text: 'All done.' },
      ])
      const done = await runIn(app, run.id, 'succeeded')
      const calls = await toolCalls(run.id)
      assert.deepEqual(calls.map((c: any) => c.status), ['succeeded', 'succeeded'])
      assert.match(calls[1].output, /Working on it…/)
      const messages = (await send(app, 'GET', `/api/chat/streams/${streamId}/messages?limit=100`)).json().data
      const interim = messages.find((m: any) => m.text === 'Working on it…')
      assert.equal(interim.authorType, 'agent')
      assert.equal(interim.authorId, done.phases[0].agentId)
      assert.equal(toolResults('mistral', requests()[2]!.body).length, 2)
    })

    it('failed calls the model sees, never a crashed run: no such tool, a tool that throws, a server down, too slow, 10 MB, input too large or not JSON', async () => {
      const big = 'x'.repeat(64 * 1024 + 1)
      const { run, requests } = await runWith('claude', ['files.echo', 'files.throws', 'files.huge', 'down.*', 'slow.delete_file'], [
        { calls: [{ name: 'nope__missing', input: {} }, { name: 'files__throws', input: {} }, { name: 'files__echo', input: { text: big } }] },
        { calls: [{ name: 'slow__delete_file', input: { path: '/slow' } }, { name: 'files__echo', rawInput: '{not json' }, { name: 'files__huge', input: {} }] },
        { text: 'Everything failed.' },
      ])
      const done = await runIn(app, run.id, 'succeeded', 30000)
      assert.equal(await outputOf(done), 'Everything failed.')
      const calls = await toolCalls(run.id)
      assert.deepEqual(calls.map((c: any) => [c.name, c.status]), [['nope__missing', 'failed'], ['files.throws', 'failed'], ['files.echo', 'failed'], ['slow.delete_file', 'failed'], ['files.echo', 'failed'], ['files.huge', 'failed']])
      assert.match(calls[0].error, /no tool named nope__missing/)
      assert.match(calls[2].error, /65548 bytes of JSON; at most 65536/)
      assert.match(calls[3].error, /did not answer within 1500 ms/)
      assert.match(calls[4].error, /JSON object/)
      assert.match(calls[5].error, /more than 4194304 bytes; Tandem stopped reading/)
      assert.match(done.phases[0].warnings[0], /down\.\*/)
      const results = toolResults('claude', requests()[1]!.body)
      assert.equal(results.length, 3)
      assert.match(results[0]!, /no tool named/)
    })

    it('an output past 64 KiB reaches the model cut with a marker; the list cuts it at 4,000 characters', async () => {
      const { run, requests } = await runWith('claude', ['files.big'], [{ calls: [{ name: 'files__big', input: { bytes: 100000 } }] }, { text: 'Big.' }])
      await runIn(app, run.id, 'succeeded')
      const [result] = toolResults('claude', requests()[1]!.body)
      assert.ok(Buffer.byteLength(result!) <= 64 * 1024)
      assert.match(result!, /\[output cut by Tandem: 100000 bytes/)
      const [call] = await toolCalls(run.id)
      assert.ok(call.output.length < 4100)
      assert.match(call.output, /cut at 4000/)
    })

    it('a model that keeps calling tools stops at TANDEM_TOOL_STEPS with a clear problem', async () => {
      const { run } = await runWith('mistral', ['files.echo'], [{ calls: [{ name: 'files__echo', input: { text: 'again' } }] }])
      const failed = await runIn(app, run.id, 'failed')
      assert.equal(failed.phases[0].error.type.endsWith('agent-failed'), true)
      assert.match(failed.phases[0].error.detail, /after 4 steps \(TANDEM_TOOL_STEPS\)/)
      assert.equal((await toolCalls(run.id)).length, 4)
    })

    it('entries that name no tool are warnings in the phase, and the run still answers', async () => {
      const { run } = await runWith('claude', ['bogus', 'tandem.nope', 'ghost.tool', 'files.nothing'], [{ text: 'No tools needed.' }])
      const done = await runIn(app, run.id, 'succeeded')
      assert.equal(done.phases[0].warnings.length, 4)
      assert.match(done.phases[0].warnings.join('\n'), /"bogus" names no tool/)
      assert.match(done.phases[0].warnings.join('\n'), /no MCP server named ghost/)
      assert.equal((await getRun(app, run.id)).status, 'succeeded')
    })

    it('the live inbox feed adds a tool approval and a question for the pool, and removes each once acted on', { timeout: 30000 }, async () => {
      await app.listen({ port: 0, host: '127.0.0.1' })
      const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
      const feed = await openInboxFeed(`${base}/api/me/inbox/events`, as.maria)
      const { events } = feed
      assert.equal(feed.res.status, 200)
      try {
        const { run } = await runWith('claude', ['files.delete_file', 'tandem.ask_operator'], [
          { calls: [{ name: 'files__delete_file', input: { path: '/live' } }] },
          { calls: [{ name: 'tandem__ask_operator', input: { question: 'Anything else?' } }] },
          { text: 'Finished.' },
        ])
        const approval = await waitFor(() => events.find((e) => e.event === 'inbox.added' && e.data.runId === run.id && e.data.kind === 'tool_approval'), 10000, 'the approval added')
        assert.equal((await send(app, 'POST', `/api/runs/${run.id}/tool-calls/${approval.data.callId}/decision`, { decision: 'approve' }, as.maria)).statusCode, 200)
        await waitFor(() => events.find((e) => e.event === 'inbox.removed' && e.data.callId === approval.data.callId), 10000, 'the approval removed')
        const question = await waitFor(() => events.find((e) => e.event === 'inbox.added' && e.data.runId === run.id && e.data.kind === 'question'), 10000, 'the question added')
        assert.equal(question.data.summary, 'Anything else?')
        assert.equal((await send(app, 'POST', `/api/runs/${run.id}/phases/${question.data.phaseRunId}/answer`, { text: 'No.' }, as.maria)).statusCode, 200)
        await waitFor(() => events.find((e) => e.event === 'inbox.removed' && e.data.callId === question.data.callId), 10000, 'the question removed')
        await runIn(app, run.id, 'succeeded')
      } finally {
        await feed.close()
      }
    })

    it('cancel while a call awaits approval: the phase is canceled and a late decision is a 409', async () => {
      const { run } = await runWith('claude', ['files.delete_file'], [{ calls: [{ name: 'files__delete_file', input: { path: '/tmp/c' } }] }, { text: 'x' }])
      await runIn(app, run.id, 'waiting')
      const [call] = await toolCalls(run.id)
      assert.equal((await send(app, 'POST', `/api/runs/${run.id}/cancel`, undefined, as.maria)).statusCode, 200)
      const canceled = await getRun(app, run.id)
      assert.equal(canceled.phases[0].status, 'canceled')
      const late = await send(app, 'POST', `/api/runs/${run.id}/tool-calls/${call.id}/decision`, { decision: 'approve' }, as.maria)
      assert.equal(late.statusCode, 409, late.body)
      // The call runs in a job an approval enqueues: none is left, so none will run.
      await waitFor(async () => ((await pendingCount(app, callKey(call.id))) === 0 ? true : undefined), 10000, 'no job of the call')
      assert.equal(files.calls.filter((c) => (c.arguments as any).path === '/tmp/c').length, 0)
      await waitFor(async () => ((await getRun(app, run.id)).status === 'canceled' ? true : undefined), 2000)
    })

    // Last: after every flow above, what they read.
    if (dialect === 'sqlite') itReadsNoWholeGrowingTable(() => scans)
  })
}
