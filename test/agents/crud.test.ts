// Agents after creation: list with cursors, read, partial update, delete — in the caller's workspace only.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import Value from 'typebox/value'
import { build, dialects, pointers, send } from '../helpers.js'
import { waitFor } from '../wait.js'
import { Agent } from '../../src/agents/schemas.js'
import { Page } from '../../src/http/schemas.js'

for (const dialect of dialects()) {
  describe(`agents CRUD (${dialect})`, () => {
    let app: FastifyInstance
    before(async () => {
      app = await build(dialect)
    })
    after(() => app.close())

    const create = async (body: Record<string, unknown>) => (await send(app, 'POST', '/api/agents', body)).json()

    it('lists agents oldest first, page by page, with a cursor that ends in null', async () => {
      const made: string[] = []
      for (let i = 0; i < 7; i++) made.push((await create({ name: `list-${i}` })).id)
      const seen: string[] = []
      let cursor: string | null = null
      let pages = 0
      do {
        const res = await send(app, 'GET', `/api/agents?limit=3${cursor ? `&cursor=${cursor}` : ''}`)
        assert.equal(res.statusCode, 200)
        const page = res.json()
        assert.ok(page.data.length <= 3)
        seen.push(...page.data.map((a: { id: string }) => a.id))
        cursor = page.nextCursor
        pages++
      } while (cursor)
      assert.deepEqual(seen.filter((id) => made.includes(id)), made)
      assert.deepEqual(seen, [...seen].sort(), 'oldest first')
      assert.equal(pages, Math.ceil(seen.length / 3))
    })

    it('a page is exactly the documented shape: every field, nothing more (it is stringified without its schema)', async () => {
      await create({
        name: 'Full', providerType: 'claude', authMode: 'api_key', credentialId: '3F0E8A52-7C1D-4E2B-9A6F-0123456789AB',
        avatarAssetId: '3f0e8a52-7c1d-4e2b-9a6f-0123456789ac', config: { model: 'claude-sonnet', nested: { a: [1, 'two', null] } },
        instructions: 'Say "hi" \\ then\nstop \u2028 ✓', templateId: 't', capabilities: { streaming: true, tools: ['web_search'] },
      })
      await create({ name: 'Bare' })
      const page = (await send(app, 'GET', '/api/agents?limit=100')).json()
      assert.ok(Value.Check(Page(Agent), page), JSON.stringify([...Value.Errors(Page(Agent), page)].slice(0, 3)))
      const documented = Object.keys(Agent.properties).sort()
      for (const agent of page.data) assert.deepEqual(Object.keys(agent).sort(), documented)
      const full = page.data.find((a: { name: string }) => a.name === 'Full')!
      assert.equal(full.instructions, 'Say "hi" \\ then\nstop \u2028 ✓')
      assert.equal(full.credentialId, '3f0e8a52-7c1d-4e2b-9a6f-0123456789ab')
    })

    it('limit defaults to 50 and must be 1 to 100; a foreign cursor is a 400', async () => {
      assert.equal((await send(app, 'GET', '/api/agents?limit=100')).statusCode, 200)
      assert.equal((await send(app, 'GET', '/api/agents?limit=1')).json().data.length, 1)
      for (const query of ['limit=0', 'limit=101', 'limit=abc', 'limit=1.5']) {
        const res = await send(app, 'GET', `/api/agents?${query}`)
        assert.equal(res.statusCode, 400, query)
        assert.deepEqual(pointers(res), ['/query/limit'])
      }
      for (const cursor of ['garbage', 'AAAA', Buffer.from('not-an-id').toString('base64url')]) {
        const res = await send(app, 'GET', `/api/agents?cursor=${cursor}`)
        assert.equal(res.statusCode, 400)
        assert.deepEqual(pointers(res), ['/query/cursor'])
      }
      assert.deepEqual(pointers(await send(app, 'GET', '/api/agents?sort=name')), ['/query/sort'])
    })

    it('reads an agent by id in any case; unknown or malformed ids are 404 / 400', async () => {
      const agent = await create({ name: 'reader' })
      assert.deepEqual((await send(app, 'GET', `/api/agents/${agent.id.toUpperCase()}`)).json(), agent)
      const missing = await send(app, 'GET', '/api/agents/01890a5d-ac96-774b-bcce-b302099a8057')
      assert.equal(missing.statusCode, 404)
      assert.equal(missing.json().type, 'urn:tandem:problem:not-found')
      const bad = await send(app, 'GET', '/api/agents/01890a5d-ac96-774b-bcce-b302099a805')
      assert.equal(bad.statusCode, 400)
      assert.deepEqual(pointers(bad), ['/path/id'])
    })

    it('PATCH changes only the fields sent, merges capabilities, replaces config, and bumps updatedAt', async () => {
      const agent = await create({ name: 'patchy', instructions: 'old', config: { a: 1, b: 2 }, capabilities: { streaming: true, tools: ['x'] }, endpointUrl: 'https://a.example' })
      // A later updatedAt needs the clock to have moved past the create's millisecond.
      await waitFor(() => Date.now() > Date.parse(agent.updatedAt), { timeoutMs: 1000, what: 'the clock to pass the create' })
      const res = await send(app, 'PATCH', `/api/agents/${agent.id}`, { name: 'patched', config: { c: 3 }, capabilities: { tools: ['y', 'z'] } })
      assert.equal(res.statusCode, 200)
      const updated = res.json()
      assert.deepEqual(
        { ...updated, updatedAt: undefined },
        { ...agent, name: 'patched', config: { c: 3 }, capabilities: { streaming: true, tools: ['y', 'z'] }, updatedAt: undefined },
      )
      assert.ok(updated.updatedAt > agent.updatedAt)
      assert.deepEqual((await send(app, 'GET', `/api/agents/${agent.id}`)).json(), updated)
    })

    it('PATCH null clears optional fields; required and defaulted fields cannot be null', async () => {
      const agent = await create({ name: 'clear', authMode: 'api_key', instructions: 'x', templateId: 't', endpointUrl: 'https://a.example', credentialId: '00000000-0000-0000-0000-000000000000' })
      const cleared = (await send(app, 'PATCH', `/api/agents/${agent.id}`, { authMode: null, instructions: null, templateId: null, endpointUrl: null, credentialId: null })).json()
      assert.deepEqual([cleared.authMode, cleared.instructions, cleared.templateId, cleared.endpointUrl, cleared.credentialId], [null, null, null, null, null])
      const res = await send(app, 'PATCH', `/api/agents/${agent.id}`, { name: null, providerType: null, config: null, capabilities: null })
      assert.equal(res.statusCode, 400)
      assert.deepEqual([...new Set(pointers(res))], ['/capabilities', '/config', '/name', '/providerType'])
    })

    it('PATCH follows the create rules at every limit and changes nothing when rejected', async () => {
      const agent = await create({ name: 'limits' })
      const ok = await send(app, 'PATCH', `/api/agents/${agent.id}`, { name: 'n'.repeat(120), instructions: 'i'.repeat(20000), capabilities: { tools: Array(50).fill('t') } })
      assert.equal(ok.statusCode, 200)
      const stored = ok.json()
      const bad = await send(app, 'PATCH', `/api/agents/${agent.id}`, {
        name: 'n'.repeat(121),
        instructions: 'i'.repeat(20001),
        capabilities: { tools: Array(51).fill('t') },
        endpointUrl: 'https://e.example/' + 'a'.repeat(2048),
        providerType: 'gpt',
        unknown: 1,
      })
      assert.equal(bad.statusCode, 400)
      assert.deepEqual([...new Set(pointers(bad))], ['/capabilities/tools', '/endpointUrl', '/instructions', '/name', '/providerType', '/unknown'])
      assert.deepEqual((await send(app, 'GET', `/api/agents/${agent.id}`)).json(), stored)
      const empty = await send(app, 'PATCH', `/api/agents/${agent.id}`, {})
      assert.equal(empty.statusCode, 400)
      assert.deepEqual(pointers(empty), [''])
    })

    it('PATCH and DELETE of an unknown agent are 404', async () => {
      const id = '01890a5d-ac96-774b-bcce-b302099a8057'
      assert.equal((await send(app, 'PATCH', `/api/agents/${id}`, { name: 'x' })).statusCode, 404)
      assert.equal((await send(app, 'DELETE', `/api/agents/${id}`)).statusCode, 404)
    })

    it('DELETE answers 204 with no body; the agent is gone', async () => {
      const agent = await create({ name: 'doomed' })
      const res = await send(app, 'DELETE', `/api/agents/${agent.id.toUpperCase()}`)
      assert.equal(res.statusCode, 204)
      assert.equal(res.body, '')
      assert.equal((await send(app, 'GET', `/api/agents/${agent.id}`)).statusCode, 404)
      assert.equal((await send(app, 'DELETE', `/api/agents/${agent.id}`)).statusCode, 404)
    })
  })
}
