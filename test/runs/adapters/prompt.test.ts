// The one prompt every model adapter sends: what it holds, and the size budget that keeps a long stream
// from overflowing a model's context (the task is always kept, older context is dropped first).
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { buildPrompt, DEFAULT_PROMPT_BUDGET, promptAsText } from '../../../src/runs/adapters/prompt.js'
import { taskPayload } from '../../fakes/vendors/context.js'

function longPayload(messages: number, messageLength: number, previous = 3, previousLength = 20_000) {
  const payload = taskPayload({ feedback: 'Shorter, please.', attempt: 3 })
  payload.messages = Array.from({ length: messages }, (_, i) => ({
    id: `m${i}`,
    authorId: 'maria',
    authorType: 'principal' as const,
    text: `message ${i} ${'x'.repeat(messageLength)}`,
    createdAt: new Date(Date.UTC(2026, 10, 22, 10, i)).toISOString(),
  }))
  payload.previous = Array.from({ length: previous }, (_, i) => ({ phaseName: `Phase ${i}`, text: `output ${i} ${'y'.repeat(previousLength)}` }))
  return payload
}

describe('task prompt', () => {
  it('holds the instructions as system prompt, and goal, instructions, feedback, input, earlier outputs and messages in order', () => {
    const prompt = buildPrompt(taskPayload({ feedback: 'Look again.', attempt: 2 }))
    assert.equal(prompt.system, 'You are the triage agent. Answer in one paragraph.')
    const order = ['# Task: Triage (phase 2 of cycle "new-ticket" in stream "Support")', 'Classify the ticket.', 'Say bug or question.', 'Operator feedback on your previous answer (attempt 1)', 'Look again.', '"ticket": "T-42"', '## Intake', 'The customer cannot log in.', 'principal maria: Please hurry']
    let at = -1
    for (const part of order) {
      const next = prompt.user.indexOf(part)
      assert.ok(next > at, `${part} comes after what precedes it`)
      at = next
    }
  })

  it('leaves out what is empty: no feedback, no input, no system prompt', () => {
    const payload = taskPayload({ instructions: null })
    payload.run.input = {}
    payload.previous = []
    payload.messages = []
    const prompt = buildPrompt(payload)
    assert.equal(prompt.system, undefined)
    assert.doesNotMatch(prompt.user, /feedback|Run input|earlier phases|Recent messages/i)
    assert.equal(promptAsText(prompt), prompt.user)
    assert.match(promptAsText(buildPrompt(taskPayload())), /^# Your instructions\nYou are the triage agent/)
  })

  it('keeps a long stream within the budget: the newest messages and the task stay, the oldest go', () => {
    const payload = longPayload(20, 5000)
    const prompt = buildPrompt(payload)
    const size = prompt.user.length + (prompt.system?.length ?? 0)
    assert.ok(size <= DEFAULT_PROMPT_BUDGET, `${size} <= ${DEFAULT_PROMPT_BUDGET}`)
    assert.match(prompt.user, /Shorter, please\./)
    assert.match(prompt.user, /Classify the ticket\./)
    assert.match(prompt.user, /message 19 /, 'the newest message is kept')
    assert.doesNotMatch(prompt.user, /message 0 /, 'the oldest message is dropped')
    assert.match(prompt.user, /older left out/)
    assert.match(prompt.user, /output 2 /, 'the latest earlier phase is kept')
  })

  it('clips a huge goal, instructions and feedback instead of overflowing', () => {
    const payload = taskPayload({ feedback: 'f'.repeat(200_000), instructions: 'i'.repeat(200_000) })
    payload.phase.goal = 'g'.repeat(200_000)
    payload.phase.instructions = 'n'.repeat(200_000)
    payload.run.input = { blob: 'z'.repeat(200_000) }
    const prompt = buildPrompt(payload)
    assert.ok(prompt.user.length + (prompt.system?.length ?? 0) <= DEFAULT_PROMPT_BUDGET)
    assert.match(prompt.user, /g… \[truncated\]/)
    assert.match(prompt.user, /f… \[truncated\]/)
  })

  it('never exceeds any budget from 4 000 characters up, whatever the stream holds', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 4000, max: 100_000 }),
        fc.integer({ min: 0, max: 20 }),
        fc.integer({ min: 0, max: 20_000 }),
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 0, max: 30_000 }),
        fc.string({ maxLength: 3000 }),
        (budget, messages, messageLength, previous, previousLength, goal) => {
          const payload = longPayload(messages, messageLength, previous, previousLength)
          payload.phase.goal = goal
          const prompt = buildPrompt(payload, budget)
          return prompt.user.length + (prompt.system?.length ?? 0) <= budget && prompt.user.includes('# Task: Triage')
        },
      ),
      { numRuns: 200 },
    )
  })
})
