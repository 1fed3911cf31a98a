// Agent retrieval for drafting: every agent of a workspace can be found, however many there
// are and however new; the full-text index follows agent updates and deletes, and is written in the same
// transaction as the agent (a rolled-back agent leaves no entry).
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { sql } from 'kysely'
import type { FastifyInstance } from 'fastify'
import { allDraftingAgentsIfFew, DRAFT_ALL_AGENTS_UP_TO, insertAgent } from '../../src/agents/store.js'
import { namedAgentIds, searchAgentIds, searchAgents } from '../../src/agents/search.js'
import { AgentIndex, type AgentProfile } from '../../src/drafter/assign.js'
import { searchPlan } from '../../src/drafter/plan.js'
import { DEFAULT_WORKSPACE } from '../../src/workspaces/store.js'
import { connect } from '../../src/db/connect.js'
import { migrateTo, migrateToLatest } from '../../src/db/migrate.js'
import { ensureWorkspace } from '../../src/workspaces/store.js'
import { build, dialects, freshDatabase, send } from '../helpers.js'

const NIL = '00000000-0000-0000-0000-000000000000'

for (const dialect of dialects()) {
  describe(`small workspaces are drafted over all their agents (${dialect})`, () => {
    let app: FastifyInstance
    after(() => app.close())

    it(`drafts alike with ${DRAFT_ALL_AGENTS_UP_TO} agents (all read) and ${DRAFT_ALL_AGENTS_UP_TO + 1} (searched)`, async () => {
      app = await build(dialect)
      const db = app.database.db
      const streamId = (await send(app, 'POST', '/api/streams', { name: 'threshold' })).json().id
      const workspaceId = (await db.selectFrom('workspaces').select('id').where('name', '=', DEFAULT_WORKSPACE).executeTakeFirstOrThrow()).id
      await db.transaction().execute(async (trx) => {
        for (let i = 0; i < DRAFT_ALL_AGENTS_UP_TO - 3; i++) await insertAgent(trx, workspaceId, { name: `Helper ${i}`, instructions: `Handles routine chores for team ${i}.`, capabilities: { tools: ['notes'] } })
      })
      const editor = (await send(app, 'POST', '/api/agents', { name: 'Editor', instructions: 'Proofreads and edits drafts.' })).json().id
      const analyst = (await send(app, 'POST', '/api/agents', { name: 'Data Analyst', capabilities: { tools: ['chart_builder'] } })).json().id
      const translator = (await send(app, 'POST', '/api/agents', { name: 'Translator' })).json().id
      const prompt = 'Proofread the draft, then chart the weekly numbers, then translate the summary into French.'
      const draft = async () => {
        const res = await send(app, 'POST', `/api/cycles/streams/${streamId}/cycles/draft`, { mode: 'generate', prompt })
        assert.equal(res.statusCode, 200, res.body)
        return res.json().draft.phasesTemplate.map((phase: { agentId: string; phaseName: string }) => [phase.phaseName, phase.agentId])
      }
      assert.ok(await allDraftingAgentsIfFew(db, workspaceId), `${DRAFT_ALL_AGENTS_UP_TO} agents are read whole`)
      const whole = await draft()
      assert.deepEqual(whole.map(([, agentId]: string[]) => agentId), [editor, analyst, translator])
      await send(app, 'POST', '/api/agents', { name: 'Gardener', instructions: 'Waters the plants.' })
      assert.equal(await allDraftingAgentsIfFew(db, workspaceId), null, `${DRAFT_ALL_AGENTS_UP_TO + 1} agents are searched`)
      assert.deepEqual(await draft(), whole)
    })
  })

  describe(`agent retrieval for drafting (${dialect})`, () => {
    let app: FastifyInstance
    let streamId: string
    let workspaceId: string
    before(async () => {
      app = await build(dialect)
      streamId = (await send(app, 'POST', '/api/streams', { name: 'retrieval' })).json().id
      const db = app.database.db
      workspaceId = (await db.selectFrom('workspaces').select('id').where('name', '=', DEFAULT_WORKSPACE).executeTakeFirstOrThrow()).id
      // 600 older agents first: the drafter used to read only the oldest 500.
      await db.transaction().execute(async (trx) => {
        for (let i = 0; i < 600; i++) await insertAgent(trx, workspaceId, { name: `Helper ${i}`, instructions: `Handles routine chores for team ${i}.`, capabilities: { tools: ['notes'] } })
      })
    })
    after(() => app.close())

    const firstAgent = async (prompt: string) => {
      const res = await send(app, 'POST', `/api/cycles/streams/${streamId}/cycles/draft`, { mode: 'generate', prompt })
      assert.equal(res.statusCode, 200, res.body)
      return res.json().draft.phasesTemplate[0].agentId as string
    }

    it('finds the newest agent of a large workspace when it fits exactly', async () => {
      const negotiator = (await send(app, 'POST', '/api/agents', { name: 'Contract Negotiator' })).json().id
      assert.equal(await firstAgent('Negotiate the renewal terms with the supplier.'), negotiator)
      // …and an agent by its tools and instructions, as well as by name.
      const mapper = (await send(app, 'POST', '/api/agents', { name: 'Atlas', instructions: 'Geocode street addresses.', capabilities: { tools: ['geocode_batch'] } })).json().id
      assert.equal(await firstAgent('Geocode the delivery addresses.'), mapper)
    })

    it('follows renames and deletes', async () => {
      const agent = (await send(app, 'POST', '/api/agents', { name: 'Invoice Auditor' })).json().id
      assert.equal(await firstAgent('Audit the invoices from March.'), agent)
      assert.equal((await send(app, 'PATCH', `/api/agents/${agent}`, { name: 'Payroll Clerk' })).statusCode, 200)
      assert.equal(await firstAgent('Audit the invoices from March.'), NIL, 'the old name no longer matches')
      assert.deepEqual(await searchAgentIds(app.database.db, workspaceId, ['payroll']), [agent])
      assert.equal((await send(app, 'DELETE', `/api/agents/${agent}`)).statusCode, 204)
      assert.deepEqual(await searchAgentIds(app.database.db, workspaceId, ['payroll']), [])
    })

    it('indexes what the scorer reads of an agent: the start of its instructions', async () => {
      const long = (await send(app, 'POST', '/api/agents', { name: 'Long Reader', instructions: `${'Reads. '.repeat(600)}Juggles oranges.` })).json().id
      assert.deepEqual(await searchAgentIds(app.database.db, workspaceId, ['reads']), [long])
      assert.deepEqual(await searchAgentIds(app.database.db, workspaceId, ['juggles']), [], 'past the 4000 characters the scorer reads')
      assert.equal((await send(app, 'DELETE', `/api/agents/${long}`)).statusCode, 204)
    })

    it('writes the index entry in the agent\'s transaction', async () => {
      const db = app.database.db
      let id = ''
      await assert.rejects(
        db.transaction().execute(async (trx) => {
          id = (await insertAgent(trx, workspaceId, { name: 'Phantom Curator' })).id
          assert.deepEqual(await searchAgentIds(trx, workspaceId, ['curator']), [id], 'visible inside the transaction')
          throw new Error('roll back')
        }),
        /roll back/,
      )
      const { rows } = await sql<{ n: number }>`select count(*) as n from agent_search where agent_id = ${id}`.execute(db)
      assert.equal(Number(rows[0]?.n), 0)
      assert.deepEqual(await searchAgentIds(db, workspaceId, ['curator']), [])
    })

    it('sees only the workspace\'s own agents', async () => {
      const db = app.database.db
      assert.deepEqual(await searchAgentIds(db, '01890a5d-ac96-774b-bcce-000000000000', ['helper', 'negotiate']), [])
      assert.ok((await searchAgentIds(db, workspaceId, ['helper'])).length > 0)
    })
  })
}

// A workspace of 5,000 agents drawn from a small vocabulary: every word of a step is in the name, tools or
// instructions of hundreds of them, thousands match each step, and many tie. The database returns only a
// few candidates per step; the best of them must be as good, by the drafter's own scorer, as the best agent of
// the whole workspace — whichever agent that is, however new.
const TOPICS = 'contract invoice shipment vendor meeting pricing data document onboarding expense report customer ticket budget payroll'.split(' ')
const ROLES = 'Analyst Assistant Checker Coordinator Editor Helper Manager Planner Reviewer Writer'.split(' ')
const VERBS = 'analyse audit check draft negotiate reconcile review schedule summarise track translate write'.split(' ')
const AGENTIVE = 'Negotiator Reconciler Translator Writer Auditor Scheduler Reviewer Analyst'.split(' ')
const STEPS = [
  'Reconcile the shipment invoices and schedule a review meeting',
  'Analyse the pricing data',
  'Draft a reply to the customer about the ticket',
  'Translate the onboarding document',
  'Negotiate the vendor contract',
  'Audit the expense report and check the budget',
  'Write a summary of the payroll report',
  'Track the shipment',
  'Look up the vendor pricing',
]

function* workspaceAgents(count: number) {
  let seed = 14
  const next = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648
    return Math.floor((seed / 2147483648) * n)
  }
  const any = (list: string[]) => list[next(list.length)] as string
  for (let i = 0; i < count; i++) {
    const topic = any(TOPICS)
    const kind = next(20)
    if (kind === 0) yield { name: `${any(TOPICS)} ${any(AGENTIVE)} ${i}` }
    else if (kind === 1) yield { name: `Agent ${i}`, instructions: `${any(VERBS)} the ${any(TOPICS)} and ${any(VERBS)} the ${any(TOPICS)} ${any(TOPICS)}.` }
    else {
      yield {
        name: `${topic} ${any(ROLES)} ${i}`,
        instructions: `${any(VERBS)} ${topic} ${any(TOPICS)} and ${any(VERBS)} ${any(TOPICS)} for the team.`,
        capabilities: { tools: [`${any(TOPICS)}_${any(VERBS)}`] },
      }
    }
  }
}

for (const dialect of dialects()) {
  describe(`agent retrieval in a workspace of 5,000 agents (${dialect})`, () => {
    let app: FastifyInstance
    let streamId: string
    let workspaceId: string
    before(async () => {
      app = await build(dialect)
      streamId = (await send(app, 'POST', '/api/streams', { name: 'scale' })).json().id
      const db = app.database.db
      workspaceId = (await db.selectFrom('workspaces').select('id').where('name', '=', DEFAULT_WORKSPACE).executeTakeFirstOrThrow()).id
      await db.transaction().execute(async (trx) => {
        for (const agent of workspaceAgents(5000)) await insertAgent(trx, workspaceId, agent)
      })
    })
    after(() => app.close())

    const everyAgent = async (): Promise<AgentProfile[]> => {
      const rows = await app.database.db.selectFrom('agents').select(['id', 'name', 'instructions', 'tools']).where('workspace_id', '=', workspaceId).execute()
      return rows.map((r) => ({ ...r, tools: JSON.parse(r.tools) as string[] }))
    }
    const candidatesFor = async (prompt: string) => {
      const queries = searchPlan({ mode: 'generate', prompt }).queries.map((q) => q.map(([word, factor, nameOnly]) => ({ word, factor, nameOnly })))
      return new Set(await searchAgents(app.database.db, workspaceId, queries))
    }

    it('returns, for each step, an agent the scorer ranks as high as the best of the whole workspace', async () => {
      const agents = await everyAgent()
      const everyone = new AgentIndex(agents)
      for (const step of STEPS) {
        const best = everyone.bestMatch(step)
        const candidates = await candidatesFor(step)
        assert.ok(candidates.size <= 100, `a few candidates, not thousands (${candidates.size})`)
        const among = new AgentIndex(agents.filter((a) => candidates.has(a.id))).bestMatch(step)
        assert.ok(best.score > 2, `the step matches agents (${step})`)
        assert.equal(among.score, best.score, `best score among the candidates for "${step}"`)
      }
    })

    it('chooses an agent created last that fits a step best, through the route', async () => {
      const firstAgent = async (prompt: string) => {
        const res = await send(app, 'POST', `/api/cycles/streams/${streamId}/cycles/draft`, { mode: 'generate', prompt })
        assert.equal(res.statusCode, 200, res.body)
        return res.json().draft.phasesTemplate.map((p: { agentId: string }) => p.agentId) as string[]
      }
      const prompt = 'Reconcile the shipment invoices and schedule a review meeting, then translate the onboarding document.'
      const before = await firstAgent(prompt)
      const fit = (await send(app, 'POST', '/api/agents', {
        name: 'Shipment Invoice Reconciler',
        instructions: 'Reconciles shipment invoices, schedules review meetings.',
        capabilities: { tools: ['invoice_reconcile', 'meeting_schedule'] },
      })).json().id
      const after = await firstAgent(prompt)
      assert.equal(after[0], fit, 'the newest agent, which fits best, does the first phase')
      assert.equal(after[1], before[1], 'the other phase keeps its agent')
      // …and one known by its name alone ("Negotiator" does what negotiate says), created after it.
      const negotiator = (await send(app, 'POST', '/api/agents', { name: 'Vendor Contract Negotiator' })).json().id
      assert.deepEqual(await firstAgent('Negotiate the vendor contract.'), [negotiator])
      const candidates = await candidatesFor('Negotiate the vendor contract.')
      assert.equal([...candidates][0], negotiator, 'the best agent comes first')
    })

    it('finds an agent a step names, however many agents fit the step\'s words better', async () => {
      const editor = (await send(app, 'POST', '/api/agents', { name: 'Editor', instructions: 'Edits copy.' })).json().id
      const prompt = 'Have Editor proofread the onboarding document.'
      assert.ok(!(await candidatesFor(prompt)).has(editor), 'hundreds of "document Editor" agents score higher on the words')
      const res = await send(app, 'POST', `/api/cycles/streams/${streamId}/cycles/draft`, { mode: 'generate', prompt })
      assert.equal(res.json().draft.phasesTemplate[0].agentId, editor, res.body)
      // …and in refine, an agent an instruction names.
      const current = res.json().draft
      const checker = (await send(app, 'POST', '/api/agents', { name: 'Payroll Checker', instructions: 'Checks payroll.' })).json().id
      const refined = await send(app, 'POST', `/api/cycles/streams/${streamId}/cycles/draft`, { mode: 'refine', prompt: 'Assign the first phase to Payroll Checker.', current })
      assert.equal(refined.json().draft.phasesTemplate[0].agentId, checker, refined.body)
    })
  })
}

for (const dialect of dialects()) {
  describe(`migrations 0035 and 0037: agents created before them are searchable (${dialect})`, () => {
    it('indexes existing agents, those known by name alone too', async () => {
      const fresh = await freshDatabase(dialect)
      const database = connect(fresh.url, { schema: fresh.schema, poolSize: 2 })
      try {
        await migrateTo(database, '0021_webhooks')
        const db = database.db
        const workspace = await ensureWorkspace(db, 'default')
        const agent = (id: string, name: string, instructions: string | null, tools: string[]) => ({
          id, workspace_id: workspace, provider_type: 'custom_webhook', auth_mode: null, name, avatar_asset_id: null, credential_id: null, config: '{}',
          instructions, template_id: null, streaming: 0, tools: JSON.stringify(tools), endpoint_url: null, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z',
        })
        await db.insertInto('agents').values([
          agent('a1', 'Atlas', 'Geocode street addresses.', ['geocode_batch']),
          agent('a2', 'Contract Negotiator', null, []),
          agent('a3', 'Copy Desk', '', ['copy_edit']),
        ]).execute()
        await migrateToLatest(database)
        assert.deepEqual(await searchAgentIds(db, workspace, ['geocode']), ['a1'])
        assert.deepEqual(await searchAgentIds(db, workspace, ['batch']), ['a1'], 'by tools')
        assert.deepEqual(await searchAgents(db, workspace, [[{ word: 'negotiate', factor: 2 }]]), ['a2'], 'stemmed: negotiator')
        assert.deepEqual(await searchAgents(db, workspace, [[{ word: 'negotiator', factor: 1, nameOnly: true }]]), ['a2'], 'known by name alone')
        assert.deepEqual(await namedAgentIds(db, workspace, [['ask', 'contract', 'negotiator', 'to', 'call']]), ['a2'], 'by name')
        assert.deepEqual(await searchAgents(db, workspace, [[{ word: 'desk', factor: 1 }]]), ['a3'])
        assert.deepEqual(await searchAgents(db, workspace, [[{ word: 'desk', factor: 1, nameOnly: true }]]), [], 'an agent with tools is not known by name alone')
      } finally {
        await database.close()
        await fresh.drop()
      }
    })
  })
}
