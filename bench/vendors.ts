// The vendor adapters' own cost: sequential deliveries to each local fake vendor (through the real clients and
// the egress guard), and building the prompt of a stream at its budget. Run: npx tsx bench/vendors.ts
import { performance } from 'node:perf_hooks'
import type { Adapter, AgentTarget } from '../src/runs/adapters/adapter.js'
import { adapterFor } from '../src/runs/adapters/index.js'
import { buildPrompt } from '../src/runs/adapters/prompt.js'
import { startAnthropicFake } from '../test/fakes/vendors/anthropic.js'
import { adapterContext, agentTarget, SECRET, taskPayload } from '../test/fakes/vendors/context.js'
import { startCursorFake } from '../test/fakes/vendors/cursor.js'
import { startDirectLineFake } from '../test/fakes/vendors/direct-line.js'
import { startElevenLabsFake } from '../test/fakes/vendors/elevenlabs.js'
import { startMistralFake } from '../test/fakes/vendors/mistral.js'

const ROUNDS = Number(process.env.ROUNDS ?? 200)

function summary(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b)
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(2)
  return `p50 ${at(0.5)} ms, p95 ${at(0.95)} ms, mean ${(samples.reduce((a, b) => a + b, 0) / samples.length).toFixed(2)} ms`
}

async function measure(label: string, adapter: Adapter, agent: AgentTarget, poll?: Record<string, unknown>) {
  const samples: number[] = []
  for (let i = 0; i < ROUNDS + 10; i++) {
    const started = performance.now()
    const outcome = poll ? await adapter.poll!(poll, taskPayload(), agent, adapterContext()) : await adapter.deliver(taskPayload(), agent, adapterContext())
    if (outcome.kind === 'failed' || outcome.kind === 'retry') throw new Error(`${label}: ${JSON.stringify(outcome)}`)
    if (i >= 10) samples.push(performance.now() - started)
  }
  console.log(`${label.padEnd(28)} ${summary(samples)}`)
}

const anthropic = await startAnthropicFake(SECRET)
const mistral = await startMistralFake(SECRET)
const elevenlabs = await startElevenLabsFake(SECRET)
const directLine = await startDirectLineFake(SECRET)
const cursor = await startCursorFake(SECRET)
directLine.bot.looksBeforeReply = Number.MAX_SAFE_INTEGER
try {
  console.log(`${ROUNDS} sequential calls each, after 10 warm-up calls (Node ${process.version})`)
  await measure('claude deliver', adapterFor('claude')!, agentTarget('claude', anthropic.base, { config: { model: 'm' } }))
  await measure('mistral chat deliver', adapterFor('mistral')!, agentTarget('mistral', mistral.base, { config: { model: 'm' } }))
  await measure('mistral agent deliver', adapterFor('mistral')!, agentTarget('mistral', mistral.base, { config: { agentId: 'a' } }))
  await measure('elevenlabs deliver', adapterFor('elevenlabs')!, agentTarget('elevenlabs', elevenlabs.url, { config: { agentId: 'a' } }))
  await measure('copilot_studio deliver', adapterFor('copilot_studio')!, agentTarget('copilot_studio', directLine.url, { authMode: 'direct_line' }))
  await measure('copilot_studio poll', adapterFor('copilot_studio')!, agentTarget('copilot_studio', directLine.url, { authMode: 'direct_line' }), { conversationId: 'conv-1', activityId: null, watermark: null })
  await measure('cursor deliver', adapterFor('cursor')!, agentTarget('cursor', cursor.url, { config: { repository: 'r' } }))
  cursor.looks.set({ agentStatus: 'RUNNING' })
  await measure('cursor poll', adapterFor('cursor')!, agentTarget('cursor', cursor.url, { config: { repository: 'r' } }), { cursorAgentId: 'bc-1' })

  const payload = taskPayload({ feedback: 'f'.repeat(5000), attempt: 2 })
  payload.messages = Array.from({ length: 20 }, (_, i) => ({ id: `m${i}`, authorId: 'a', authorType: 'principal' as const, text: 'x'.repeat(20_000), createdAt: new Date().toISOString() }))
  payload.previous = Array.from({ length: 10 }, (_, i) => ({ phaseName: `P${i}`, text: 'y'.repeat(50_000) }))
  const builds: number[] = []
  for (let i = 0; i < 2000; i++) {
    const started = performance.now()
    buildPrompt(payload)
    builds.push(performance.now() - started)
  }
  console.log(`${'prompt (20×20k msgs, 10×50k)'.padEnd(28)} ${summary(builds.slice(200))}`)
} finally {
  await Promise.all([anthropic, mistral, elevenlabs, directLine, cursor].map((f) => f.close()))
}
