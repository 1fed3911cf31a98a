// The builtin engine's parts: triggers, steps, handles, assignment, determinism and refine's promise
// to keep what it does not touch.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { draftBuiltin } from '../../src/drafter/builtin.js'
import { handles, slug } from '../../src/text/language.js'
import { splitSteps, splitTrigger } from '../../src/drafter/steps.js'
import { AgentIndex } from '../../src/drafter/assign.js'
import type { CycleDefinition } from '../../src/cycles/schemas.js'

const agents = [
  { id: 'a1', name: 'Researcher', instructions: 'Research companies, topics and sources.', tools: ['web_search'] },
  { id: 'a2', name: 'Reply Writer', instructions: 'Draft friendly customer replies.', tools: ['compose_reply'] },
  { id: 'a3', name: 'Analyst', instructions: 'Analyse data and build charts.', tools: ['sql', 'charts'] },
]
const counter = () => {
  let n = 0
  return () => `01890a5d-ac96-774b-bcce-${(++n).toString(16).padStart(12, '0')}`
}

describe('builtin drafter', () => {
  it('names triggers as slugs without the leading word and determiners', () => {
    const cases: Array<[string, string | null]> = [
      ['When a support ticket arrives, triage it.', 'support-ticket-arrives'],
      ['Every Monday morning, pull numbers.', 'monday-morning'],
      ['Whenever the CEO\'s inbox gets an email: reply.', 'ceo-inbox-gets-email'],
      ['Each time a new hire joins, greet them.', 'new-hire-joins'],
      ['On every new order, extract totals.', 'new-order'],
      ['Once a week, summarise.', 'week'],
      ['When an invoice arrives then extract it.', 'invoice-arrives'],
      ['Triage the ticket.', null],
      ['Once that is done, reply.', null],
      ['When nothing', null],
    ]
    for (const [prompt, name] of cases) assert.equal(splitTrigger(prompt).trigger?.name ?? null, name, prompt)
    assert.equal(slug('An Urgent ticket is escalated!'), 'urgent-ticket-is-escalated')
  })

  it('collects @handles in order, once, without trailing punctuation or possessives', () => {
    assert.deepEqual(handles('Ask @maria, then @hr-anna. Wait for @dana\'s approval and @maria again; mail x@y.z'), ['maria', 'hr-anna', 'dana'])
  })

  it('splits steps at sequencing words and verb series, not at a plain "and"', () => {
    const names = ['researcher', 'reply writer', 'analyst']
    assert.deepEqual(splitSteps('Pull the numbers and build a chart.', names), ['Pull the numbers and build a chart'])
    assert.deepEqual(splitSteps('First triage it, then draft a reply, and finally send it.', names), ['triage it', 'draft a reply', 'send it'])
    assert.deepEqual(splitSteps('Research X, analyse Y, and write Z.', names), ['Research X', 'analyse Y', 'write Z'])
    assert.deepEqual(splitSteps('Research pricing, competitors, and trends.', names), ['Research pricing, competitors, and trends'])
    assert.deepEqual(splitSteps('Analyst pulls data, Researcher reads sources.', names), ['Analyst pulls data', 'Researcher reads sources'])
    assert.deepEqual(splitSteps('Write a first draft. Next, review it.', names), ['Write a first draft', 'review it'])
    assert.deepEqual(splitSteps('Steps:\n1. Triage it.\n2) Reply, then close.\n- Archive', names), ['Triage it', 'Reply, then close', 'Archive'])
  })

  it('ranks agents by name, tools and instructions, with stemming, and refuses weak matches', () => {
    const index = new AgentIndex(agents)
    assert.equal(index.bestMatch('research the lead\'s company').agent?.name, 'Researcher', 'company ~ companies')
    assert.equal(index.bestMatch('chart the numbers').agent?.name, 'Analyst')
    assert.equal(index.bestMatch('water the plants').agent, null)
    assert.equal(index.named("Summarise the Researcher's notes")?.agent.name, 'Researcher')
    assert.equal(index.named('ask reply writer to help')?.agent.name, 'Reply Writer')
  })

  it('is deterministic: the same prompt and ids give the same draft', () => {
    const prompt = 'When a lead arrives, research the company, then draft a reply for @sam, and analyse the data.'
    const first = draftBuiltin({ mode: 'generate', prompt, agents }, counter())
    const second = draftBuiltin({ mode: 'generate', prompt, agents }, counter())
    assert.deepEqual(first, second)
    assert.deepEqual(first.draft.phasesTemplate.map((p) => [p.agentId, p.autoAdvance, p.operatorPool]), [
      ['a1', true, []],
      ['a2', false, ['sam']],
      ['a3', true, []],
    ])
  })

  it('phase names are short titles from the verb and object', () => {
    const { draft } = draftBuiltin({ mode: 'generate', prompt: `Research ${'very '.repeat(40)}long topics in the archive.`, agents }, counter())
    const [phase] = draft.phasesTemplate
    assert.ok(phase && phase.phaseName.length <= 60)
    assert.match(phase!.phaseName, /^Research very/)
  })

  it('property: an instruction refine does not understand changes nothing and warns', () => {
    const phase = fc.record({
      id: fc.uuid({ version: 7 }),
      agentId: fc.constantFrom('a1', 'a2', '00000000-0000-0000-0000-000000000000'),
      goal: fc.string(),
      instructions: fc.string(),
      autoAdvance: fc.boolean(),
      phaseName: fc.string({ minLength: 1, maxLength: 20 }),
      operatorPool: fc.array(fc.string({ minLength: 1, maxLength: 8 }), { maxLength: 3 }),
    }).map((p) => ({ ...p }))
    fc.assert(
      fc.property(fc.array(phase, { maxLength: 6 }), (phases) => {
        const current: CycleDefinition = { triggerName: 'manual', description: 'd', phasesTemplate: phases }
        const outcome = draftBuiltin({ mode: 'refine', prompt: 'Sing a song about the weather.', current, agents }, counter())
        assert.deepEqual(outcome.draft, current)
        assert.deepEqual(outcome.changes, [])
        assert.equal(outcome.warnings[0]?.code, 'not-understood')
      }),
      { numRuns: 200, seed: 7 },
    )
  })
})
