// What a draft over a small workspace reads of its agents (src/agents/drafting-cache.ts) and how the builtin
// engine scores them (src/drafter/assign.ts postings, src/drafter/index-by-text.ts): a change made through another
// instance is drafted with at once, the list's JSON text is the list's, and scoring through postings picks what
// reading every agent's weights picked.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { allDraftingAgentsIfFew } from '../../src/agents/store.js'
import { DraftingProfileCache, draftingJsonOf } from '../../src/agents/drafting-cache.js'
import { AgentIndex, type AgentProfile } from '../../src/drafter/assign.js'
import { indexByText, keptIndex } from '../../src/drafter/index-by-text.js'
import { words, workStems } from '../../src/text/language.js'
import { TEST_SECRET_KEY, dialects, freshDatabase, send, type TestDatabase } from '../helpers.js'

describe('DraftingProfileCache', () => {
  it('answers a row only at its version, and stays within its bound', () => {
    const cache = new DraftingProfileCache(200)
    const profile = (name: string): AgentProfile => ({ id: name, name, instructions: 'x'.repeat(40), tools: [] })
    cache.set('a', 1, profile('a'))
    assert.equal(cache.get('a', 2), undefined)
    assert.equal(cache.get('a', 1)?.json, JSON.stringify(profile('a')))
    assert.ok(Object.isFrozen(cache.get('a', 1)?.profile), 'shared profiles are frozen')
    for (const id of ['b', 'c', 'd', 'e']) cache.set(id, 1, profile(id))
    assert.ok(cache.size.chars <= 200)
    assert.equal(cache.get('a', 1), undefined, 'the oldest went first')
  })
})

describe('scoring through postings', () => {
  it('picks the agent (and score) that reading every agent\'s weights for every stem picks, on the example agents', () => {
    const examples = JSON.parse(readFileSync(new URL('fixtures/examples.json', import.meta.url), 'utf8')) as { agents: Array<{ name: string; instructions?: string; capabilities?: { tools?: string[] } }>; prompts?: unknown }
    const agents: AgentProfile[] = examples.agents.map((a, i) => ({ id: `a${i}`, name: a.name, instructions: a.instructions ?? null, tools: a.capabilities?.tools ?? [] }))
    // The same agents twice: ties go to the first.
    const index = new AgentIndex([...agents, ...agents.map((a) => ({ ...a, id: `${a.id}-twin` }))])
    const weightsOf = (agent: AgentProfile) => new AgentIndex([agent]) as unknown as { agents: Array<{ weights: Map<string, number> }> }
    const steps = ['translate the reply into French', 'summarise the ticket in the weekly chart', 'research the customer company', 'book a follow-up meeting', 'review the contract and approve it', 'nothing relevant here']
    for (const step of steps) {
      const stems = [...workStems(words(step), 2)]
      let best: { id: string | null; score: number } = { id: null, score: 0 }
      for (const agent of [...agents, ...agents.map((a) => ({ ...a, id: `${a.id}-twin` }))]) {
        const { weights } = weightsOf(agent).agents[0]!
        const score = stems.reduce((sum, [s, factor]) => sum + (weights.get(s) ?? 0) * factor, 0)
        if (score > best.score) best = { id: agent.id, score }
      }
      const match = index.bestMatch(step)
      assert.equal(match.score, best.score, step)
      if (match.agent) assert.equal(match.agent.id, best.id, step)
    }
  })

  it('keeps the index of a list by its text: the same text, the same index; another text, another', () => {
    const one = JSON.stringify([{ id: 'x', name: 'Translator', instructions: 'Translate replies', tools: [] }])
    const index = indexByText(one)
    assert.equal(indexByText(`${one}`), index)
    assert.equal(keptIndex(one.replace('Translate', 'Summarise')), undefined)
  })
})

for (const dialect of dialects()) {
  describe(`a small workspace's agents as the drafter reads them (${dialect})`, () => {
    let database: TestDatabase
    let one: FastifyInstance
    let two: FastifyInstance
    before(async () => {
      database = await freshDatabase(dialect)
      const config = loadConfig({ LOG_LEVEL: 'silent', TANDEM_SECRET_KEY: TEST_SECRET_KEY, TANDEM_WORKERS: '0', DATABASE_URL: database.url })
      one = await buildApp(config, { connect: { schema: database.schema } })
      two = await buildApp(config, { connect: { schema: database.schema } })
    })
    after(async () => {
      await one.close()
      await two.close()
      await database.drop()
    })

    it('reads a change or a deletion made through another instance at once, and the list carries its own JSON text', async () => {
      const ids: string[] = []
      for (const name of ['Translator', 'Summariser', 'Researcher']) ids.push((await send(one, 'POST', '/api/agents', { name, instructions: `${name} work`, capabilities: { tools: ['web_search'] } })).json().id)
      const stream = (await send(one, 'POST', '/api/streams', { name: 'drafting' })).json()
      const { workspace_id: workspaceId } = await one.database.db.selectFrom('streams').select('workspace_id').where('id', '=', stream.id).executeTakeFirstOrThrow()
      const first = (await allDraftingAgentsIfFew(one.database.db, workspaceId))!
      assert.deepEqual(first.map((a) => a.name), ['Translator', 'Summariser', 'Researcher'])
      assert.equal(draftingJsonOf(first), JSON.stringify(first))
      await send(two, 'PATCH', `/api/agents/${ids[0]}`, { name: 'Interpreter' })
      await send(two, 'DELETE', `/api/agents/${ids[2]}`)
      const second = (await allDraftingAgentsIfFew(one.database.db, workspaceId))!
      assert.deepEqual(second.map((a) => a.name), ['Interpreter', 'Summariser'])
      assert.equal(draftingJsonOf(second), JSON.stringify(second))
      // Drafted with at once, through the route (on this thread: a short generate prompt).
      const draft = (await send(one, 'POST', `/api/cycles/streams/${stream.id}/cycles/draft`, { mode: 'generate', prompt: 'Have the Interpreter handle the reply.' })).json()
      assert.equal(draft.draft.phasesTemplate[0].agentId, ids[0])
    })
  })
}
