// Agent retrieval for drafting (issue 14): every agent of a workspace can be found, however many there
// are and however new; the full-text index follows agent updates and deletes, and is written in the same
// transaction as the agent (a rolled-back agent leaves no entry).
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { sql } from 'kysely'
import type { FastifyInstance } from 'fastify'
import { insertAgent } from '../../src/agents/store.js'
import { searchAgentIds } from '../../src/agents/search.js'
import { DEFAULT_WORKSPACE } from '../../src/workspaces/store.js'
import { build, dialects, send } from '../helpers.js'

const NIL = '00000000-0000-0000-0000-000000000000'

for (const dialect of dialects()) {
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
