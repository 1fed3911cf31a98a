// What a draft over a small workspace reads of its agents (src/agents/drafting-cache.ts) and how the builtin
// engine scores them (src/drafter/assign.ts postings, src/drafter/index-by-text.ts): a change made through another
// instance is drafted with at once, the list's JSON text is the list's, a list kept by the data mark (SQLite) is
// read again after any write, and scoring through postings picks what reading every agent's weights picked.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import type { FastifyInstance } from 'fastify'
import Database from 'better-sqlite3'
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

    it('drafts with an agent created, edited or deleted after the last draft at once, through this instance or another', async () => {
      const stream = (await send(one, 'POST', '/api/streams', { name: 'changes between drafts' })).json()
      const assignee = async (app: FastifyInstance, prompt: string): Promise<string> => {
        const response = await send(app, 'POST', `/api/cycles/streams/${stream.id}/cycles/draft`, { mode: 'generate', prompt })
        assert.equal(response.statusCode, 200, response.body)
        return response.json().draft.phasesTemplate[0].agentId
      }
      const proofread = 'Have the Proofreader check the reply.'
      const before = await assignee(one, proofread)
      const created = (await send(two, 'POST', '/api/agents', { name: 'Proofreader', instructions: 'Proofread replies' })).json().id
      assert.notEqual(before, created)
      assert.equal(await assignee(one, proofread), created, 'created through another instance')
      assert.equal(await assignee(one, proofread), created, 'and again, with nothing changed')
      await send(one, 'PATCH', `/api/agents/${created}`, { name: 'Copy Editor', instructions: 'Edit copy' })
      assert.notEqual(await assignee(one, proofread), created, 'renamed through this instance')
      assert.equal(await assignee(one, 'Have the Copy Editor check the reply.'), created)
      await send(two, 'PATCH', `/api/agents/${created}`, { name: 'Proofreader' })
      assert.equal(await assignee(one, proofread), created, 'renamed back through another instance')
      await send(two, 'DELETE', `/api/agents/${created}`)
      assert.notEqual(await assignee(one, proofread), created, 'deleted through another instance')
      const again = (await send(one, 'POST', '/api/agents', { name: 'Proofreader', instructions: 'Proofread replies' })).json().id
      assert.equal(await assignee(one, proofread), again, 'created through this instance')
      await send(one, 'DELETE', `/api/agents/${again}`)
      assert.notEqual(await assignee(one, proofread), again, 'deleted through this instance')
    })

    if (dialect === 'sqlite') {
      it('keeps the list while nothing is written, and reads it again after any write, even by another connection', async () => {
        const stream = (await send(one, 'POST', '/api/streams', { name: 'kept list' })).json()
        const { workspace_id: workspaceId } = await one.database.db.selectFrom('streams').select('workspace_id').where('id', '=', stream.id).executeTakeFirstOrThrow()
        const db = one.database.db
        const first = await allDraftingAgentsIfFew(db, workspaceId)
        assert.equal(await allDraftingAgentsIfFew(db, workspaceId), first, 'nothing written: the same list')
        assert.ok(Object.isFrozen(first), 'a kept list is frozen')
        // A write to another table only: read again, and alike.
        await send(one, 'POST', '/api/streams', { name: 'unrelated' })
        const second = await allDraftingAgentsIfFew(db, workspaceId)
        assert.notEqual(second, first)
        assert.deepEqual(second, first)
        // Another connection to the file (as another process would write): its commit is seen at once.
        const target = first!.find((agent) => agent.name === 'Summariser')!
        const other = new Database(database.url.slice('sqlite:'.length))
        other.prepare('update agents set name = ?, version = version + 1 where id = ?').run('Abstract Writer', target.id)
        other.close()
        const third = await allDraftingAgentsIfFew(db, workspaceId)
        assert.equal(third!.find((agent) => agent.id === target.id)?.name, 'Abstract Writer')
        assert.equal(draftingJsonOf(third!), JSON.stringify(third))
      })
    }
  })
}
