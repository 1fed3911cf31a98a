// Hostile 100 KB prompts (long runs of one character, endless references) in both modes: every draft
// finishes and is a valid cycle. This guards against catastrophic backtracking; speed is in the benchmark.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { Compile } from 'typebox/compile'
import { draftBuiltin } from '../../src/cycles/drafter/builtin.js'
import { CycleDefinition, MAX_PHASES } from '../../src/cycles/schemas.js'
import { ADVERSARIAL, N } from './fixtures/adversarial.js'

const agents = [{ id: '01890a5d-ac96-774b-bcce-00000000000a', name: 'Analyst', instructions: 'Analyse data', tools: ['sql'] }]
const current = {
  triggerName: 't',
  description: 'd',
  phasesTemplate: [{ id: '01890a5d-ac96-774b-bcce-000000000001', agentId: agents[0]!.id, goal: 'g', instructions: 'i', autoAdvance: true, phaseName: 'Triage', operatorPool: [] }],
}
const isCycle = Compile(CycleDefinition)

describe('adversarial prompts', () => {
  for (const [name, prompt] of Object.entries(ADVERSARIAL)) {
    it(`${name}: both modes finish with a valid cycle`, { timeout: 60000 }, () => {
      assert.ok(prompt.length <= N)
      for (const mode of ['generate', 'refine'] as const) {
        const { draft } = draftBuiltin({ mode, prompt, current, agents })
        assert.ok(isCycle.Check(draft), `${mode}: ${JSON.stringify(draft).slice(0, 200)}`)
        assert.ok(draft.phasesTemplate.length <= MAX_PHASES)
      }
    })
  }
})
