// The polled adapters against local services: Copilot Studio over Direct Line 3.0 and Cursor's background
// agents API. deliver() hands back a poll state (ids only, never a token), each poll() looks once.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { AgentTarget, DeliveryOutcome } from '../../../src/runs/adapters/adapter.js'
import { copilotStudioAdapter } from '../../../src/runs/adapters/copilot-studio.js'
import { cursorAdapter } from '../../../src/runs/adapters/cursor.js'
import { adapterContext, agentTarget, SECRET, taskPayload } from '../../fakes/vendors/context.js'
import { startCursorFake } from '../../fakes/vendors/cursor.js'
import { startDirectLineFake } from '../../fakes/vendors/direct-line.js'

function pollState(outcome: DeliveryOutcome) {
  assert.equal(outcome.kind, 'poll', JSON.stringify(outcome))
  return (outcome as Extract<DeliveryOutcome, { kind: 'poll' }>).state
}

describe('copilot_studio adapter (Direct Line 3.0)', () => {
  let fake: Awaited<ReturnType<typeof startDirectLineFake>>
  let agent: AgentTarget
  before(async () => {
    fake = await startDirectLineFake(SECRET)
    agent = agentTarget('copilot_studio', fake.url, { authMode: 'direct_line' })
  })
  after(() => fake.close())

  it('starts a conversation, posts a message activity and polls by watermark until the bot replies', async () => {
    fake.bot.replies = ['It is a bug.', 'Anything else?']
    fake.bot.looksBeforeReply = 1
    const state = pollState(await copilotStudioAdapter.deliver(taskPayload(), agent, adapterContext()))
    assert.deepEqual(Object.keys(state).sort(), ['activityId', 'conversationId', 'watermark'])
    assert.doesNotMatch(JSON.stringify(state), /conversation-token|sk-test/)
    const [start, post] = fake.requests.slice(-2)
    assert.equal(start!.path, '/v3/directline/conversations')
    assert.equal(start!.headers.authorization, `Bearer ${SECRET}`)
    assert.equal(post!.path, `/v3/directline/conversations/${state.conversationId}/activities`)
    assert.equal(post!.body.type, 'message')
    assert.equal(post!.body.from.id, 'tandem')
    assert.match(post!.body.text, /You are the triage agent[^]*Classify the ticket\./)

    // First look: only our own message echoed back, so keep polling from the new watermark.
    const waiting = pollState(await copilotStudioAdapter.poll!(state, taskPayload(), agent, adapterContext()))
    assert.equal(waiting.watermark, '1')
    assert.equal(waiting.conversationId, state.conversationId)
    // Second look: typing, then two messages.
    const answered = await copilotStudioAdapter.poll!(waiting, taskPayload(), agent, adapterContext())
    assert.deepEqual(answered, { kind: 'answered', output: { text: 'It is a bug.\n\nAnything else?' } })
    assert.equal(fake.requests.at(-1)!.url.searchParams.get('watermark'), '1')
  })

  it('sends the operator feedback of a revision', async () => {
    fake.bot.looksBeforeReply = 0
    fake.bot.replies = ['Revised.']
    const state = pollState(await copilotStudioAdapter.deliver(taskPayload({ feedback: 'Mention the customer.', attempt: 2 }), agent, adapterContext()))
    assert.match(fake.requests.at(-1)!.body.text, /Operator feedback[^]*Mention the customer\./)
    assert.deepEqual(await copilotStudioAdapter.poll!(state, taskPayload(), agent, adapterContext()), { kind: 'answered', output: { text: 'Revised.' } })
  })

  it('a wrong secret is agent-rejected, on delivery and on a poll', async () => {
    const wrong = { ...agent, secret: 'dl-wrong-secret-0000' }
    const outcome = await copilotStudioAdapter.deliver(taskPayload(), wrong, adapterContext())
    assert.equal(outcome.kind === 'failed' && outcome.code, 'agent-rejected')
    assert.doesNotMatch(JSON.stringify(outcome), /dl-wrong|sk-test/)
    const polled = await copilotStudioAdapter.poll!({ conversationId: 'conv-1', activityId: null, watermark: null }, taskPayload(), wrong, adapterContext())
    assert.equal(polled.kind === 'failed' && polled.code, 'agent-rejected')
  })

  it('a rate limit is a retry; a poll that hits one is a retry too, and the next poll succeeds', async () => {
    fake.starts.set({ status: 429, retryAfter: '2' }, {})
    const limited = await copilotStudioAdapter.deliver(taskPayload(), agent, adapterContext())
    assert.deepEqual(limited, { kind: 'retry', detail: 'Direct Line answered with status 429.', retryAfterMs: 2000 })
    fake.bot.looksBeforeReply = 0
    fake.bot.replies = ['After the limit.']
    const state = pollState(await copilotStudioAdapter.deliver(taskPayload(), agent, adapterContext()))
    fake.looks.set({ status: 502 }, {})
    assert.equal((await copilotStudioAdapter.poll!(state, taskPayload(), agent, adapterContext())).kind, 'retry')
    assert.deepEqual(await copilotStudioAdapter.poll!(state, taskPayload(), agent, adapterContext()), { kind: 'answered', output: { text: 'After the limit.' } })
  })

  it('a malformed answer is agent-failed', async () => {
    fake.starts.set({ raw: '<html>gateway</html>' }, {})
    const outcome = await copilotStudioAdapter.deliver(taskPayload(), agent, adapterContext())
    assert.equal(outcome.kind === 'failed' && outcome.code, 'agent-failed')
    const state = pollState(await copilotStudioAdapter.deliver(taskPayload(), agent, adapterContext()))
    fake.looks.set({ raw: '{"activities": "none"}' }, {})
    const polled = await copilotStudioAdapter.poll!(state, taskPayload(), agent, adapterContext())
    assert.equal(polled.kind === 'failed' && polled.code, 'agent-failed')
  })

  it('a look slower than the dispatch time-out is a retry', async () => {
    fake.bot.looksBeforeReply = 0
    const state = pollState(await copilotStudioAdapter.deliver(taskPayload(), agent, adapterContext()))
    fake.looks.set({ delayMs: 2000 }, {})
    const outcome = await copilotStudioAdapter.poll!(state, taskPayload(), agent, adapterContext(200))
    assert.equal(outcome.kind, 'retry')
    assert.match(outcome.kind === 'retry' ? outcome.detail : '', /within 200 ms/)
  })

  it('needs nothing more than authMode direct_line and its secret, which the registry checks (test/runs/adapters/auth-mode.test.ts)', () => {
    assert.equal(copilotStudioAdapter.unavailable(agent), null)
  })
})

describe('cursor adapter (background agents)', () => {
  let fake: Awaited<ReturnType<typeof startCursorFake>>
  let agent: AgentTarget
  before(async () => {
    fake = await startCursorFake(SECRET)
    agent = agentTarget('cursor', fake.url, { config: { repository: 'https://github.com/acme/app', ref: 'main', model: 'claude-4-sonnet' } })
  })
  after(() => fake.close())

  it('launches an agent on the repository and ref, then polls until FINISHED: the summary and the PR are the output', async () => {
    fake.launches.set({ agentStatus: 'CREATING' })
    fake.looks.set({ agentStatus: 'RUNNING' }, { agentStatus: 'FINISHED', summary: 'Fixed the login bug.', prUrl: 'https://github.com/acme/app/pull/7' })
    const state = pollState(await cursorAdapter.deliver(taskPayload(), agent, adapterContext()))
    assert.deepEqual(state, { cursorAgentId: fake.launched.at(-1)!.id })
    const launch = fake.requests.at(-1)!
    assert.equal(launch.path, '/v0/agents')
    assert.equal(launch.headers.authorization, `Bearer ${SECRET}`)
    assert.deepEqual(launch.body.source, { repository: 'https://github.com/acme/app', ref: 'main' })
    assert.equal(launch.body.model, 'claude-4-sonnet')
    assert.match(launch.body.prompt.text, /You are the triage agent[^]*Classify the ticket\./)
    assert.deepEqual(await cursorAdapter.poll!(state, taskPayload(), agent, adapterContext()), { kind: 'poll', state })
    assert.equal(fake.requests.at(-1)!.path, `/v0/agents/${state.cursorAgentId}`)
    assert.deepEqual(await cursorAdapter.poll!(state, taskPayload(), agent, adapterContext()), {
      kind: 'answered',
      output: { text: 'Fixed the login bug.\n\nPull request: https://github.com/acme/app/pull/7' },
    })
  })

  it('sends the operator feedback of a revision', async () => {
    await cursorAdapter.deliver(taskPayload({ feedback: 'Add a test too.', attempt: 2 }), agent, adapterContext())
    assert.match(fake.launched.at(-1)!.body.prompt.text, /Operator feedback[^]*Add a test too\./)
  })

  it('ERROR and EXPIRED are agent-failed', async () => {
    const state = pollState(await cursorAdapter.deliver(taskPayload(), agent, adapterContext()))
    for (const agentStatus of ['ERROR', 'EXPIRED']) {
      fake.looks.set({ agentStatus })
      const outcome = await cursorAdapter.poll!(state, taskPayload(), agent, adapterContext())
      assert.deepEqual(outcome, { kind: 'failed', code: 'agent-failed', detail: `The Cursor agent ended with status ${agentStatus}.` })
    }
  })

  it('a wrong key is agent-rejected', async () => {
    const outcome = await cursorAdapter.deliver(taskPayload(), { ...agent, secret: 'cur-wrong-key-000' }, adapterContext())
    assert.equal(outcome.kind === 'failed' && outcome.code, 'agent-rejected')
    assert.doesNotMatch(JSON.stringify(outcome), /cur-wrong|sk-test/)
  })

  it('a rate limit is a retry, then the launch succeeds', async () => {
    fake.launches.set({ status: 429 }, { agentStatus: 'CREATING' })
    assert.equal((await cursorAdapter.deliver(taskPayload(), agent, adapterContext())).kind, 'retry')
    assert.equal((await cursorAdapter.deliver(taskPayload(), agent, adapterContext())).kind, 'poll')
  })

  it('a malformed answer is agent-failed (no id, no status, finished without a summary)', async () => {
    fake.launches.set({ raw: '{"status": "CREATING"}' }, { agentStatus: 'CREATING' })
    assert.equal((await cursorAdapter.deliver(taskPayload(), agent, adapterContext())).kind, 'failed')
    const state = pollState(await cursorAdapter.deliver(taskPayload(), agent, adapterContext()))
    fake.looks.set({ raw: '{"id": "x"}' })
    const shapeless = await cursorAdapter.poll!(state, taskPayload(), agent, adapterContext())
    assert.equal(shapeless.kind === 'failed' && shapeless.code, 'agent-failed')
    fake.looks.set({ agentStatus: 'FINISHED', noBranch: true })
    const empty = await cursorAdapter.poll!(state, taskPayload(), agent, adapterContext())
    assert.equal(empty.kind === 'failed' && empty.code, 'agent-failed')
    // A branch without summary or PR is output enough: it says where the work is.
    fake.looks.set({ agentStatus: 'FINISHED' })
    assert.deepEqual(await cursorAdapter.poll!(state, taskPayload(), agent, adapterContext()), { kind: 'answered', output: { text: 'Branch: cursor/fix-login' } })
  })

  it('a launch slower than the dispatch time-out is a retry', async () => {
    fake.launches.set({ agentStatus: 'CREATING', delayMs: 2000 })
    const outcome = await cursorAdapter.deliver(taskPayload(), agent, adapterContext(200))
    assert.equal(outcome.kind, 'retry')
    fake.launches.set({ agentStatus: 'CREATING' })
  })

  it('needs config.repository (the credential is checked by the registry: auth-mode.test.ts)', () => {
    assert.match(cursorAdapter.unavailable({ ...agent, config: {} }) ?? '', /config\.repository/)
    assert.match(cursorAdapter.unavailable({ ...agent, config: { repository: 'r', autoCreatePr: 'yes' } }) ?? '', /autoCreatePr/)
    assert.equal(cursorAdapter.unavailable(agent), null)
  })
})
