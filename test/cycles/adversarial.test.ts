// Hostile 100 KB prompts (long runs of one character, endless references, thousands of short refine
// instructions) in both modes, on a one-phase cycle and on 100 phases with long names: every draft
// finishes and is a valid cycle. This guards against catastrophic backtracking and quadratic work; speed
// is in the benchmark (npm run bench:drafter).
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { Compile } from 'typebox/compile'
import { draftBuiltin } from '../../src/drafter/builtin.js'
import { finishDraft } from '../../src/drafter/finish.js'
import { MAX_INSTRUCTIONS } from '../../src/drafter/refine/instructions.js'
import { CycleDefinition, MAX_OPERATORS, MAX_PHASES } from '../../src/cycles/schemas.js'
import { ADVERSARIAL, longPhases, N } from './fixtures/adversarial.js'

const agents = [{ id: '01890a5d-ac96-774b-bcce-00000000000a', name: 'Analyst', instructions: 'Analyse data', tools: ['sql'] }]
const onePhase = {
  triggerName: 't',
  description: 'd',
  phasesTemplate: [{ id: '01890a5d-ac96-774b-bcce-000000000001', agentId: agents[0]!.id, goal: 'g', instructions: 'i', autoAdvance: true, phaseName: 'Triage', operatorPool: [] }],
}
const isCycle = Compile(CycleDefinition)

describe('adversarial prompts', () => {
  for (const [name, prompt] of Object.entries(ADVERSARIAL)) {
    it(`${name}: both modes finish with a valid cycle, on 1 phase and on 100 long-named phases`, { timeout: 60000 }, () => {
      assert.ok(prompt.length <= N)
      for (const current of [onePhase, longPhases(agents[0]!.id)]) {
        for (const mode of ['generate', 'refine'] as const) {
          // The engine and then the finishing step every draft goes through (finish.ts), as the route does.
          const { draft } = finishDraft(draftBuiltin({ mode, prompt, current, agents }))
          assert.ok(isCycle.Check(draft), `${mode}: ${JSON.stringify(draft).slice(0, 200)}`)
          assert.ok(draft.phasesTemplate.length <= MAX_PHASES)
        }
      }
    })
  }

  it('a refine reads at most MAX_INSTRUCTIONS instructions and says how many it ignored', () => {
    const { draft, warnings } = draftBuiltin({ mode: 'refine', prompt: 'drop zz. '.repeat(11111), current: longPhases(agents[0]!.id), agents })
    const ignored = warnings.find((w) => w.code === 'too-many-instructions')
    assert.ok(ignored, 'a warning names the cap')
    assert.match(ignored.detail, new RegExp(`at most ${MAX_INSTRUCTIONS} instructions; the ${11111 - MAX_INSTRUCTIONS} after them were ignored`))
    // Every fourth phase's long name has the word "zz": the 25 match equally, so each of the 100 instructions read
    // changes nothing and says which phases it could mean; the 11,011 after them are not read.
    assert.equal(draft.phasesTemplate.length, 100)
    assert.equal(warnings.filter((w) => w.code === 'ambiguous-phase').length, MAX_INSTRUCTIONS)
  })

  it('12,000 @handles in one step: one phase with the first 100 as operators and a warning', () => {
    const { draft, warnings } = draftBuiltin({ mode: 'generate', prompt: `Analyse the data with ${ADVERSARIAL.handles12000}`, agents })
    assert.equal(draft.phasesTemplate.length, 1)
    assert.deepEqual(draft.phasesTemplate[0]!.operatorPool, Array.from({ length: MAX_OPERATORS }, (_, i) => `u${i}`))
    assert.ok(warnings.some((w) => w.code === 'too-many-operators'))
  })
})
