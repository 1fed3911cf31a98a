// The drafter's language layer: agentive nouns, synonyms and phrasal verbs, sentence shapes,
// verbs outside the closed list, abbreviations, and pronouns within and across refine instructions.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { draftBuiltin } from '../../src/drafter/builtin.js'
import { AgentIndex, indexCacheStats } from '../../src/drafter/assign.js'
import { agentChanged } from '../../src/drafter/agent-changes.js'
import { isVerb, baseVerb, splitSentences, words, workTerms } from '../../src/text/language.js'
import { agentiveVerb } from '../../src/text/lexicon.js'
import { splitSteps } from '../../src/drafter/steps.js'
import type { CycleDefinition } from '../../src/cycles/schemas.js'

const NIL = '00000000-0000-0000-0000-000000000000'
const agents = [
  { id: 'reply', name: 'Reply Writer', instructions: 'Draft friendly customer replies.', tools: ['compose_reply'] },
  { id: 'research', name: 'Researcher', instructions: 'Research companies and sources.', tools: ['web_search'] },
  { id: 'analyst', name: 'Analyst', instructions: 'Analyse data, compute metrics and build charts.', tools: ['sql'] },
  { id: 'editor', name: 'Editor', instructions: 'Edit and proofread drafts.', tools: ['proofread'] },
  { id: 'copy', name: 'Copywriter', instructions: 'Write articles and newsletters.', tools: [] },
  { id: 'caller', name: 'Voice Caller', instructions: 'Call customers by phone.', tools: ['phone_call'] },
  { id: 'scheduler', name: 'Scheduler', instructions: 'Book meetings and manage calendars.', tools: ['calendar'] },
  { id: 'negotiator', name: 'Contract Negotiator', instructions: null, tools: [] },
  { id: 'archiver', name: 'Archiver', instructions: null, tools: [] },
  { id: 'translator', name: 'Translator', instructions: null, tools: [] },
]
const index = new AgentIndex(agents)
const best = (step: string) => index.bestMatch(step).agent?.id ?? null
const generate = (prompt: string) => draftBuiltin({ mode: 'generate', prompt, agents }).draft.phasesTemplate
const uuid = (n: number) => `01890a5d-ac96-774b-bcce-${n.toString(16).padStart(12, '0')}`
const current: CycleDefinition = {
  triggerName: 'manual',
  description: 'd',
  phasesTemplate: ['Pull metrics', 'Write newsletter', 'Proofread', 'Publish'].map((phaseName, i) => ({
    id: uuid(i + 1), agentId: NIL, goal: 'g', instructions: 'i', autoAdvance: true, phaseName, operatorPool: [],
  })),
}
const refine = (prompt: string) => draftBuiltin({ mode: 'refine', prompt, current, agents })
const names = (cycle: CycleDefinition) => cycle.phasesTemplate.map((p) => p.phaseName)

describe('language layer', () => {
  it('agentive nouns: an agent known by its name does what the name says', () => {
    assert.deepEqual(['writer', 'translator', 'analyst', 'editor', 'negotiator', 'archiver', 'planner'].map(agentiveVerb), ['write', 'translate', 'analyse', 'edit', 'negotiate', 'archive', 'plan'])
    assert.equal(best('negotiate the renewal terms'), 'negotiator')
    assert.equal(best('archive the signed PDF'), 'archiver')
    assert.equal(best('translate the onboarding guide'), 'translator')
    assert.equal(best('write the reply to the customer'), 'reply')
  })

  it('synonyms and phrasal verbs', () => {
    assert.equal(best("look up the company's funding history"), 'research')
    assert.equal(best('ring the supplier about the late delivery'), 'caller')
    assert.equal(best('set up a meeting with the vendor'), 'scheduler')
    assert.equal(best('crunch the sales figures'), 'analyst')
    assert.deepEqual(names(refine('Get rid of the Proofread step.').draft), ['Pull metrics', 'Write newsletter', 'Publish'])
    const handedOff = refine('Hand off Publish to Editor.').draft.phasesTemplate[3]
    assert.equal(handedOff?.agentId, 'editor')
  })

  it('verbs outside the closed list, from the lexicon', () => {
    for (const verb of ['negotiate', 'countersign', 'reconcile', 'interview', 'benchmark', 'notifies', 'archived']) assert.ok(isVerb(verb), verb)
    for (const word of ['the', 'contract', 'monday', 'quarterly']) assert.ok(!isVerb(word), word)
    assert.equal(baseVerb('countersigns'), 'countersign')
    const phases = generate('Negotiate the contract, countersign it, and archive the PDF.')
    assert.deepEqual(phases.map((p) => p.agentId), ['negotiator', NIL, 'archiver'])
  })

  it('abbreviations do not end sentences', () => {
    assert.deepEqual(splitSentences('Dr. Smith reviews the draft. Then e.g. the FAQ, vs. the plan. J. Doe signs. call a b m. call c'), [
      'Dr. Smith reviews the draft.',
      'Then e.g. the FAQ, vs. the plan.',
      'J. Doe signs.',
      'call a b m.',
      'call c',
    ])
    const [phase] = generate('Dr. Smith reviews the draft.')
    assert.equal(phase?.phaseName, 'Review draft')
    assert.equal(generate('Translate the letter from Acme Corp. into Dutch.').length, 1)
  })

  it('sentence shapes: trailing assignments, series ending in "and", fronted clauses, several instructions in a sentence', () => {
    assert.deepEqual(generate('Draft the quarterly report, handled by Editor.').map((p) => p.agentId), ['editor'])
    assert.deepEqual(splitSteps('Classify the ticket, draft a reply and translate it into Spanish.', []), ['Classify the ticket', 'draft a reply', 'translate it into Spanish'])
    assert.deepEqual(splitSteps('Pull the numbers and build a chart.', []), ['Pull the numbers and build a chart'], 'a plain "and" still does not split')
    const fronted = refine('Before Publish, add a step to translate the newsletter.').draft
    assert.deepEqual(names(fronted), ['Pull metrics', 'Write newsletter', 'Proofread', 'Translate newsletter', 'Publish'])
    assert.equal(refine('For the first phase, use Analyst.').draft.phasesTemplate[0]?.agentId, 'analyst')
    const within = refine('Assign Publish to Copywriter and make it wait for @tom.').draft.phasesTemplate[3]
    assert.deepEqual([within?.agentId, within?.operatorPool, within?.autoAdvance], ['copy', ['tom'], false])
  })

  it('pronouns across instructions: "it" is the phase the previous instruction touched', () => {
    const moved = refine('Add a review step after Write newsletter, then move it to the end.').draft
    assert.deepEqual(names(moved), ['Pull metrics', 'Write newsletter', 'Proofread', 'Publish', 'Review'])
    const renamed = refine('Rename Pull metrics to Gather metrics. Then move it to the end.').draft
    assert.deepEqual(names(renamed), ['Write newsletter', 'Proofread', 'Publish', 'Gather metrics'])
    assert.equal(renamed.phasesTemplate[3]?.id, uuid(1))
    const unresolved = refine('Move it to the end.')
    assert.deepEqual(unresolved.draft, current, 'with nothing touched before, "it" names no phase')
    assert.equal(unresolved.warnings[0]?.code, 'unknown-phase')
    assert.equal(refine('Make it manual.').draft.triggerName, 'manual', '"it" with nothing touched before is the cycle')
  })

  it('search terms carry base forms, synonyms and agentive nouns to the full-text index, with the scorer\'s factors', () => {
    const terms = (text: string) => new Map(workTerms(words(text), 2).map((t) => [`${t.word}${t.nameOnly ? ' (name only)' : ''}`, t.factor]))
    const writing = terms('Writing the notes, then look up prices.')
    assert.equal(writing.get('writing'), 2, 'the main verb counts double')
    assert.equal(writing.get('notes'), 1)
    assert.equal(writing.get('writer (name only)'), 2, 'an agentive noun, for agents known by name alone')
    assert.equal(writing.get('copywriter (name only)'), 2)
    assert.ok(!writing.has('the'))
    assert.ok(!writing.has('write'), 'one word per stem')
    assert.equal(terms('Look up prices.').get('research'), 2, 'a phrasal verb\'s synonyms')
    assert.equal(terms('Analyse the data.').get('compute'), 1, 'a synonym counts half')
  })
})

describe('the indexed-agent cache', () => {
  it('is weighted by size, and drops an agent that is changed or deleted', () => {
    const small = (n: number) => ({ id: `cache-${n}`, name: `Cache Agent ${n}`, instructions: 'Sort things.', tools: [] })
    new AgentIndex([small(1), small(2), small(3)])
    const before = indexCacheStats()
    agentChanged('cache-2')
    assert.equal(indexCacheStats().agents, before.agents - 1)
    assert.ok(indexCacheStats().characters < before.characters)
    // One agent heavier than the whole budget pushes every other agent out (and is indexed all the same).
    const huge = { id: 'cache-huge', name: 'Huge', instructions: 'x '.repeat(before.limit), tools: [] }
    assert.equal(new AgentIndex([huge]).bestMatch('sort the things').agent, null)
    assert.equal(indexCacheStats().agents, 1)
  })
})
