// drafts worth keeping — goals that state the outcome, insertions that land where asked and go to the
// agent named, references by a word of a phase's name or its verb's noun. Each case here failed before.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { draftBuiltin } from '../../src/drafter/builtin.js'
import type { CycleDefinition, Phase } from '../../src/cycles/schemas.js'

const agents = [
  { id: 'researcher', name: 'Researcher', instructions: 'Finds and summarises sources', tools: ['web_search'] },
  { id: 'writer', name: 'Writer', instructions: 'Drafts replies and reports', tools: [] },
  { id: 'editor', name: 'Editor', instructions: 'Edit and proofread drafts for clarity, grammar and style.', tools: ['proofread'] },
  { id: 'analyst', name: 'Analyst', instructions: 'Analyse data, compute metrics, build charts and summarise trends.', tools: ['sql', 'charts'] },
  { id: 'copywriter', name: 'Copywriter', instructions: 'Write articles, blog posts, newsletters and marketing copy.', tools: ['write_article'] },
  { id: 'translator', name: 'Translator', instructions: 'Translate documents and messages between languages.', tools: ['translate'] },
]
let n = 0
const newId = () => `01890a5d-ac96-774b-bcce-${(++n).toString(16).padStart(12, '0')}`
const generate = (prompt: string) => draftBuiltin({ mode: 'generate', prompt, agents }, newId)
const refine = (prompt: string, current: CycleDefinition) => draftBuiltin({ mode: 'refine', prompt, current, agents }, newId)
const phase = (phaseName: string, agentId: string, extra: Partial<Phase> = {}): Phase => ({
  id: newId(), phaseName, agentId, goal: 'g', instructions: 'i', autoAdvance: true, operatorPool: [], ...extra,
})
const cycle = (...phases: Phase[]): CycleDefinition => ({ triggerName: 'manual', description: 'd', phasesTemplate: phases })
const newsletter = () => cycle(phase('Pull metrics', 'analyst'), phase('Write newsletter', 'copywriter'), phase('Proofread', 'editor', { autoAdvance: false, operatorPool: ['tom'] }), phase('Publish', '00000000-0000-0000-0000-000000000000'))
const replies = () => cycle(phase('Triage', 'analyst'), phase('Draft reply', 'writer'), phase('Send reply', 'writer'))

describe('goals and instructions worth keeping', () => {
  it('the README\'s prompt: outcomes without the agent\'s name, instructions in the step\'s own words', () => {
    const { draft } = generate('First the Researcher finds sources, then the Writer drafts a reply, then @lee approves it.')
    assert.deepEqual(draft.phasesTemplate.map((p) => [p.phaseName, p.goal, p.agentId]), [['Find sources', 'Sources found', 'researcher'], ['Draft reply', 'Reply drafted', 'writer']])
    assert.equal(draft.phasesTemplate[0]!.instructions, 'Find sources.')
    assert.equal(draft.phasesTemplate[1]!.instructions, 'Draft a reply. @lee approves it.')
  })

  it('object and past participle, a pronoun read as what came before, replies, complements; never "… done"', () => {
    const goals = (prompt: string) => generate(prompt).draft.phasesTemplate.map((p) => p.goal)
    assert.deepEqual(goals('When a support ticket arrives, triage it, then draft a reply.'), ['Support ticket triaged', 'Reply drafted'])
    assert.deepEqual(goals('Researcher gathers competitor prices; Analyst compares them with ours.'), ['Competitor prices gathered', 'Competitor prices compared'])
    assert.deepEqual(goals('Reply to the customer with the outcome.'), ['Reply sent to customer'])
    assert.deepEqual(goals('Translator converts the user manual into Spanish.'), ['User manual converted into Spanish'])
    assert.deepEqual(goals('Analyst pulls last week\'s sales numbers and builds a chart.'), ['Last week\'s sales numbers pulled'])
    assert.deepEqual(goals('Look up the prices.'), ['Prices looked up'])
    for (const goal of goals('Research the market, then analyse the data, then publish.')) assert.doesNotMatch(goal, /\bdone$/)
  })

  it('instructions drop the agent and put its verbs in the base form, and keep other actors', () => {
    const instructions = (prompt: string) => generate(prompt).draft.phasesTemplate.map((p) => p.instructions)
    assert.deepEqual(instructions('Editor proofreads the blog post and fixes typos.'), ['Proofread the blog post and fix typos.'])
    assert.deepEqual(instructions('Have the Translator translate the contract into German.'), ['Translate the contract into German.'])
    assert.deepEqual(instructions('Dr. Smith reviews the contract.'), ['Dr. Smith reviews the contract.'])
  })

  it('a step written as a gerund or an outcome, and an activity without a verb', () => {
    const start = refine('Start by translating the ticket.', replies()).draft.phasesTemplate[0]!
    assert.deepEqual([start.goal, start.instructions], ['Ticket translated', 'Translate the ticket.'])
    assert.deepEqual(generate('- Sales numbers pulled').draft.phasesTemplate.map((p) => p.goal), ['Sales numbers pulled'])
    assert.equal(refine('Insert a QA step before Send reply.', replies()).draft.phasesTemplate[2]!.goal, 'QA complete')
  })

  it('what a step hands on to another agent joins its instructions, not a phase of its own', () => {
    const { draft } = generate('First the Researcher finds sources, then hands them to the Writer, then the Writer drafts a reply.')
    assert.deepEqual(draft.phasesTemplate.map((p) => [p.agentId, p.instructions]), [['researcher', 'Find sources. Hand them to the Writer.'], ['writer', 'Draft a reply.']])
    assert.deepEqual(generate('Researcher finds sources and passes them to the Writer.').draft.phasesTemplate.map((p) => p.instructions), ['Find sources and pass them to the Writer.'])
    assert.equal(generate('Draft a reply, then send the reply to the customer.').draft.phasesTemplate.length, 2, 'the customer is not an agent: sending is work')
  })
})

describe('insertions', () => {
  const shape = (draft: CycleDefinition) => draft.phasesTemplate.map((p) => `${p.phaseName}:${p.agentId}`)

  it('before X, handled by <agent>', () => {
    const { draft, warnings } = refine('Insert a QA step before Send reply, handled by Editor.', replies())
    assert.deepEqual(shape(draft), ['Triage:analyst', 'Draft reply:writer', 'QA:editor', 'Send reply:writer'])
    assert.deepEqual(warnings, [])
  })

  it('a fronted placement clause', () => {
    const { draft } = refine('Before Pull metrics, research industry benchmarks.', newsletter())
    assert.equal(draft.phasesTemplate[0]!.agentId, 'researcher')
    assert.equal(draft.phasesTemplate[1]!.phaseName, 'Pull metrics')
  })

  it('a trailing placement clause', () => {
    const { draft } = refine('Translate the newsletter into French after Proofread.', newsletter())
    assert.deepEqual(draft.phasesTemplate.map((p) => p.agentId).slice(2, 4), ['editor', 'translator'])
  })

  it('between X and Y, assigned, then another instruction', () => {
    const { draft } = refine('Add a review step between Write newsletter and Proofread, handled by Editor, then make Publish wait for @tom.', newsletter())
    assert.deepEqual(shape(draft).slice(1, 4), ['Write newsletter:copywriter', 'Review:editor', 'Proofread:editor'])
    assert.deepEqual([draft.phasesTemplate[4]!.autoAdvance, draft.phasesTemplate[4]!.operatorPool], [false, ['tom']])
  })

  it('an unknown agent in the assignment warns and leaves the phase to the best match', () => {
    const { draft, warnings } = refine('Insert a QA step before Send reply, handled by Gandalf.', replies())
    assert.equal(draft.phasesTemplate.length, 4)
    assert.ok(warnings.some((w) => w.code === 'unknown-agent'))
  })
})

describe('references', () => {
  const readme = () => cycle(phase('Researcher finds sources', 'researcher'), phase('Writer drafts reply', 'writer', { instructions: 'Draft a reply. @lee approves it.', autoAdvance: false, operatorPool: ['lee'] }))

  it('"the draft too" is the phase "Writer drafts reply"', () => {
    const { draft, warnings } = refine('And let @maria approve the draft too.', readme())
    assert.deepEqual(draft.phasesTemplate[1]!.operatorPool, ['lee', 'maria'])
    assert.deepEqual(warnings, [])
    assert.equal(draft.phasesTemplate[1]!.instructions, 'Draft a reply. @lee and @maria approve it.', 'the instructions name the approvers the gate now has')
  })

  it('the sentence naming the approvers follows the operators: one, several, none', () => {
    const signed = generate('First the Researcher finds sources, then the Writer drafts a reply, then @lee signs off on it.').draft
    const three = refine('Add @kim and @jo to the draft.', signed).draft
    assert.equal(three.phasesTemplate[1]!.instructions, 'Draft a reply. @lee, @kim and @jo sign off on it.')
    assert.equal(refine('Remove @kim and @jo from the draft.', three).draft.phasesTemplate[1]!.instructions, 'Draft a reply. @lee signs off on it.')
    assert.equal(refine('Remove @lee from the draft.', readme()).draft.phasesTemplate[1]!.instructions, 'Draft a reply.')
  })

  it('by its verb\'s noun: the proofreading, the publication, the sending', () => {
    assert.deepEqual(refine('Move the publication before the proofreading.', newsletter()).draft.phasesTemplate.map((p) => p.phaseName), ['Pull metrics', 'Write newsletter', 'Publish', 'Proofread'])
    assert.deepEqual(refine('Remove the metrics step.', newsletter()).draft.phasesTemplate.map((p) => p.phaseName), ['Write newsletter', 'Proofread', 'Publish'])
  })

  it('two phases that match equally: a warning naming both, and nothing changes', () => {
    const current = replies()
    const { draft, warnings } = refine('Remove the reply step.', current)
    assert.deepEqual(draft.phasesTemplate, current.phasesTemplate)
    assert.equal(warnings.length, 1)
    assert.equal(warnings[0]!.code, 'ambiguous-phase')
    assert.match(warnings[0]!.detail, /"Draft reply" or "Send reply"/)
  })
})
