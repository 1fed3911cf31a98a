// Agent templates (docs/agents-templates-assets.md, "Templates") on both databases: the built-in catalogue, workspace templates
// (admins write, members read, 409 on a taken id, 404 across workspaces, built-ins read-only), every bound
// at the bound and one past it with its pointer, pages, and creating an agent from a template: omitted fields
// filled (capabilities field by field), the request's fields win, templateId kept, an unknown id fills nothing.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { ensureWorkspace } from '../../src/workspaces/store.js'
import { BUILTIN_TEMPLATES } from '../../src/templates/catalogue.js'
import { build, dialects, pointers, send } from '../helpers.js'
import { createKey } from '../auth.js'

const TEMPLATE = {
  id: 'support-triage',
  name: 'Support triage',
  description: 'Our support triage agent.',
  agent: { providerType: 'mistral', config: { model: 'mistral-small-latest' }, instructions: 'Triage support tickets.', capabilities: { streaming: true, tools: ['tandem.read_messages'] } },
}

describe('built-in catalogue', () => {
  it('holds at least six templates covering a webhook agent, a token-only agent, and Claude and Mistral for triage, research, writing and review', () => {
    assert.ok(BUILTIN_TEMPLATES.length >= 6)
    const providers = new Set(BUILTIN_TEMPLATES.map((t) => t.agent.providerType))
    for (const provider of ['custom_webhook', 'custom_token_only', 'claude', 'mistral']) assert.ok(providers.has(provider as never), provider)
    for (const provider of ['claude', 'mistral']) {
      for (const job of ['triage', 'research', 'writer', 'reviewer']) assert.ok(BUILTIN_TEMPLATES.some((t) => t.id === `builtin:${provider}-${job}`), `${provider} ${job}`)
    }
    assert.equal(new Set(BUILTIN_TEMPLATES.map((t) => t.id)).size, BUILTIN_TEMPLATES.length, 'unique ids')
    for (const template of BUILTIN_TEMPLATES) {
      assert.match(template.id, /^builtin:[a-z0-9-]+$/)
      assert.ok((template.agent.instructions ?? '').length >= 300, `${template.id} has instructions a team would keep`)
      assert.ok(template.description.length >= 40, template.id)
    }
  })
})

for (const dialect of dialects()) {
  describe(`agent templates (${dialect})`, () => {
    let app: FastifyInstance
    let admin: Record<string, string>
    let member: Record<string, string>
    let foreign: Record<string, string>
    before(async () => {
      app = await build(dialect, { TANDEM_AUTH: 'required' })
      const db = app.database.db
      const workspaceId = await ensureWorkspace(db, 'default')
      admin = (await createKey(app, { workspaceId, name: 'admin', role: 'admin' })).headers
      member = (await createKey(app, { workspaceId, name: 'member' })).headers
      foreign = (await createKey(app, { workspace: 'foreign', name: 'f', role: 'admin' })).headers
    })
    after(() => app.close())

    const create = (body: unknown, headers = admin) => send(app, 'POST', '/api/agent-templates', body, headers)
    const createAgent = (body: unknown) => send(app, 'POST', '/api/agents', body, admin)

    it('lists the built-in templates first, each creating a valid agent as it is', async () => {
      const res = await send(app, 'GET', '/api/agent-templates?limit=100', undefined, member)
      assert.equal(res.statusCode, 200, res.body)
      const builtins = res.json().data.filter((t: { builtin: boolean }) => t.builtin)
      assert.deepEqual(builtins.map((t: { id: string }) => t.id), BUILTIN_TEMPLATES.map((t) => t.id))
      assert.deepEqual(res.json().data.slice(0, builtins.length), builtins)
      for (const template of builtins) {
        assert.equal(template.createdAt, null)
        const agent = await createAgent({ name: template.name, templateId: template.id })
        assert.equal(agent.statusCode, 201, agent.body)
        assert.equal(agent.json().providerType, template.agent.providerType)
        assert.equal(agent.json().instructions, template.agent.instructions)
        assert.deepEqual(agent.json().capabilities, template.agent.capabilities)
        assert.deepEqual(agent.json().config, template.agent.config)
        assert.equal(agent.json().templateId, template.id)
      }
      const one = await send(app, 'GET', '/api/agent-templates/builtin:claude-triage', undefined, member)
      assert.equal(one.statusCode, 200)
      assert.equal(one.json().agent.providerType, 'claude')
    })

    it('creates, reads, lists, updates and deletes a workspace template (admins); members read and get 403 on writes', async () => {
      assert.equal((await create(TEMPLATE, member)).statusCode, 403)
      const res = await create(TEMPLATE)
      assert.equal(res.statusCode, 201, res.body)
      assert.equal(res.headers.location, '/api/agent-templates/support-triage')
      const template = res.json()
      assert.deepEqual({ ...template, createdAt: undefined, updatedAt: undefined }, { ...TEMPLATE, builtin: false, createdAt: undefined, updatedAt: undefined })
      assert.deepEqual((await send(app, 'GET', '/api/agent-templates/support-triage', undefined, member)).json(), template)
      const listed = (await send(app, 'GET', '/api/agent-templates?limit=100', undefined, member)).json().data
      assert.deepEqual(listed.at(-1), template)
      assert.equal((await send(app, 'PATCH', '/api/agent-templates/support-triage', { name: 'x' }, member)).statusCode, 403)
      const patched = await send(app, 'PATCH', '/api/agent-templates/support-triage', { description: 'Updated.', agent: { providerType: 'claude' } }, admin)
      assert.equal(patched.statusCode, 200, patched.body)
      assert.equal(patched.json().description, 'Updated.')
      assert.deepEqual(patched.json().agent, { providerType: 'claude' }, 'agent is replaced whole')
      assert.equal(patched.json().name, TEMPLATE.name)
      assert.equal((await send(app, 'DELETE', '/api/agent-templates/support-triage', undefined, member)).statusCode, 403)
      assert.equal((await send(app, 'DELETE', '/api/agent-templates/support-triage', undefined, admin)).statusCode, 204)
      assert.equal((await send(app, 'GET', '/api/agent-templates/support-triage', undefined, member)).statusCode, 404)
      assert.equal((await send(app, 'DELETE', '/api/agent-templates/support-triage', undefined, admin)).statusCode, 404)
    })

    it('refuses a taken id with 409 (pointer /id) and changes nothing', async () => {
      assert.equal((await create({ ...TEMPLATE, id: 'taken' })).statusCode, 201)
      const again = await create({ ...TEMPLATE, id: 'taken', name: 'Another' })
      assert.equal(again.statusCode, 409)
      assert.deepEqual(pointers(again), ['/id'])
      assert.equal((await send(app, 'GET', '/api/agent-templates/taken', undefined, admin)).json().name, TEMPLATE.name)
    })

    it('honours Idempotency-Key on create: a retry gets the first answer, and a refusal is answered the same again', async () => {
      const key = { ...admin, 'idempotency-key': 'template-1' }
      const first = await create({ ...TEMPLATE, id: 'idempotent' }, key)
      assert.equal(first.statusCode, 201)
      const again = await create({ ...TEMPLATE, id: 'idempotent' }, key)
      assert.equal(again.headers['idempotent-replayed'], 'true')
      assert.deepEqual(again.json(), first.json())
      const taken = { ...admin, 'idempotency-key': 'template-2' }
      assert.equal((await create({ ...TEMPLATE, id: 'idempotent' }, taken)).statusCode, 409)
      const replayed = await create({ ...TEMPLATE, id: 'idempotent' }, taken)
      assert.equal(replayed.statusCode, 409)
      assert.equal(replayed.headers['idempotent-replayed'], 'true')
    })

    it('keeps built-in templates read-only (403) and their ids out of the workspace (400 /id)', async () => {
      assert.equal((await send(app, 'PATCH', '/api/agent-templates/builtin:claude-triage', { name: 'Mine' }, admin)).statusCode, 403)
      assert.equal((await send(app, 'DELETE', '/api/agent-templates/builtin:claude-triage', undefined, admin)).statusCode, 403)
      assert.deepEqual(pointers(await create({ ...TEMPLATE, id: 'builtin:claude-triage' })), ['/id'])
      assert.equal((await send(app, 'GET', '/api/agent-templates/builtin:nope', undefined, admin)).statusCode, 404)
    })

    it("hides another workspace's templates behind 404, and they fill nothing there", async () => {
      assert.equal((await create({ ...TEMPLATE, id: 'private-one' })).statusCode, 201)
      for (const [method, body] of [['GET', undefined], ['PATCH', { name: 'x' }], ['DELETE', undefined]] as const) {
        assert.equal((await send(app, method, '/api/agent-templates/private-one', body, foreign)).statusCode, 404, method)
      }
      const listed = (await send(app, 'GET', '/api/agent-templates?limit=100', undefined, foreign)).json().data
      assert.ok(listed.every((t: { builtin: boolean }) => t.builtin))
      const agent = await send(app, 'POST', '/api/agents', { name: 'Foreign', templateId: 'private-one' }, foreign)
      assert.equal(agent.statusCode, 201)
      assert.equal(agent.json().providerType, 'custom_webhook')
      assert.equal(agent.json().instructions, null)
      assert.equal(agent.json().templateId, 'private-one')
    })

    it('validates every field with a pointer, each bound at the bound and one past it, and stores nothing on a 400', async () => {
      const valid = { ...TEMPLATE, id: 'bound-check' }
      const bad: Array<[unknown, string[]]> = [
        [{}, ['/agent', '/description', '/id', '/name']],
        [{ ...valid, id: 'Upper' }, ['/id']],
        [{ ...valid, id: '-edge' }, ['/id']],
        [{ ...valid, id: 'a'.repeat(65) }, ['/id']],
        [{ ...valid, id: 'has space' }, ['/id']],
        [{ ...valid, name: '' }, ['/name']],
        [{ ...valid, name: 'n'.repeat(121) }, ['/name']],
        [{ ...valid, description: 'd'.repeat(2001) }, ['/description']],
        [{ ...valid, extra: 1 }, ['/extra']],
        [{ ...valid, agent: { name: 'No' } }, ['/agent/name']],
        [{ ...valid, agent: { templateId: 'builtin:claude-triage' } }, ['/agent/templateId']],
        [{ ...valid, agent: { providerType: 'skynet' } }, ['/agent/providerType']],
        [{ ...valid, agent: { authMode: 'password' } }, ['/agent/authMode']],
        [{ ...valid, agent: { instructions: 'i'.repeat(20001) } }, ['/agent/instructions']],
        [{ ...valid, agent: { capabilities: { tools: Array.from({ length: 51 }, (_, i) => `t${i}`) } } }, ['/agent/capabilities/tools']],
        [{ ...valid, agent: { endpointUrl: 'ftp://x' } }, ['/agent/endpointUrl']],
        [{ ...valid, agent: { avatarAssetId: 'nope' } }, ['/agent/avatarAssetId']],
        [{ ...valid, agent: [] }, ['/agent']],
      ]
      for (const [body, expected] of bad) {
        const res = await create(body)
        assert.equal(res.statusCode, 400, JSON.stringify(body).slice(0, 80))
        assert.deepEqual([...new Set(pointers(res))], expected, JSON.stringify(body).slice(0, 80))
      }
      assert.equal((await send(app, 'GET', '/api/agent-templates/bound-check', undefined, admin)).statusCode, 404)
      const atBounds = {
        id: `a${'b'.repeat(62)}c`, name: 'n'.repeat(120), description: 'd'.repeat(2000),
        agent: { instructions: 'i'.repeat(20000), capabilities: { tools: Array.from({ length: 50 }, (_, i) => `t${i}`) } },
      }
      assert.equal((await create(atBounds)).statusCode, 201)
      assert.equal((await create({ ...TEMPLATE, id: '7', agent: {} })).statusCode, 201, 'a one-character slug and an empty agent')
      const empty = await send(app, 'PATCH', '/api/agent-templates/7', {}, admin)
      assert.equal(empty.statusCode, 400)
      assert.deepEqual(pointers(empty), [''], 'the body itself: at least one field')
      assert.deepEqual(pointers(await send(app, 'PATCH', '/api/agent-templates/7', { agent: { name: 'x' } }, admin)), ['/agent/name'])
      assert.equal((await send(app, 'GET', '/api/agent-templates/Not_A_Slug', undefined, admin)).statusCode, 400)
    })

    it('creates an agent from a template: omitted fields filled, capabilities field by field, the request wins, templateId kept', async () => {
      const credential = (await send(app, 'POST', '/api/credentials', { name: 'k', secret: 'sk-0123456789abcdef' }, admin)).json()
      const template = {
        id: 'full', name: 'Full', description: '',
        agent: {
          providerType: 'claude', authMode: 'api_key', credentialId: credential.id, avatarAssetId: '0193a5b4-0000-7000-8000-000000000001',
          config: { model: 'claude-haiku-4-5' }, instructions: 'From the template.', capabilities: { streaming: true, tools: ['tandem.read_messages'] },
          endpointUrl: 'https://gateway.example.com/v1',
        },
      }
      assert.equal((await create(template)).statusCode, 201)
      const filled = await createAgent({ name: 'Filled', templateId: 'full' })
      assert.equal(filled.statusCode, 201, filled.body)
      const { id: _id, name, createdAt: _c, updatedAt: _u, ...fields } = filled.json()
      assert.equal(name, 'Filled')
      assert.deepEqual(fields, { ...template.agent, templateId: 'full' })

      const mixed = await createAgent({ name: 'Mixed', templateId: 'full', providerType: 'mistral', config: { model: 'mistral-small-latest' }, capabilities: { tools: [] } })
      assert.equal(mixed.statusCode, 201, mixed.body)
      assert.equal(mixed.json().providerType, 'mistral')
      assert.deepEqual(mixed.json().config, { model: 'mistral-small-latest' }, 'config is the request\'s, whole')
      assert.deepEqual(mixed.json().capabilities, { streaming: true, tools: [] }, 'streaming from the template, tools from the request')
      assert.equal(mixed.json().instructions, 'From the template.')
      assert.equal(mixed.json().templateId, 'full')

      const unknown = await createAgent({ name: 'Unknown', templateId: 'no-such-template' })
      assert.equal(unknown.statusCode, 201)
      assert.deepEqual(
        { providerType: unknown.json().providerType, instructions: unknown.json().instructions, capabilities: unknown.json().capabilities, templateId: unknown.json().templateId },
        { providerType: 'custom_webhook', instructions: null, capabilities: { streaming: false, tools: [] }, templateId: 'no-such-template' },
      )
      // The agent keeps what it was created with when the template changes or goes.
      await send(app, 'DELETE', '/api/agent-templates/full', undefined, admin)
      assert.equal((await send(app, 'GET', `/api/agents/${filled.json().id}`, undefined, admin)).json().instructions, 'From the template.')
    })

    it('pages through built-in and workspace templates with an opaque cursor', async () => {
      for (const id of ['page-a', 'page-b', 'page-c']) assert.equal((await create({ ...TEMPLATE, id })).statusCode, 201)
      const all = (await send(app, 'GET', '/api/agent-templates?limit=100', undefined, admin)).json().data.map((t: { id: string }) => t.id)
      const seen: string[] = []
      let cursor: string | null = null
      do {
        const res = await send(app, 'GET', `/api/agent-templates?limit=3${cursor ? `&cursor=${cursor}` : ''}`, undefined, admin)
        assert.equal(res.statusCode, 200, res.body)
        seen.push(...res.json().data.map((t: { id: string }) => t.id))
        cursor = res.json().nextCursor
      } while (cursor)
      assert.deepEqual(seen, all)
      assert.deepEqual(pointers(await send(app, 'GET', `/api/agent-templates?cursor=${Buffer.from('Not a template id!').toString('base64url')}`, undefined, admin)), ['/query/cursor'])
    })
  })
}

describe('OpenAPI: templates and assets', () => {
  it('declares every new operation with named schemas', async () => {
    const app = await build('sqlite')
    try {
      const document = (await send(app, 'GET', '/openapi.json')).json()
      const operation = (path: string, method: string) => document.paths[path]?.[method]
      const expected: Array<[string, string, string]> = [
        ['/api/agent-templates', 'post', 'createAgentTemplate'], ['/api/agent-templates', 'get', 'listAgentTemplates'],
        ['/api/agent-templates/{id}', 'get', 'getAgentTemplate'], ['/api/agent-templates/{id}', 'patch', 'updateAgentTemplate'],
        ['/api/agent-templates/{id}', 'delete', 'deleteAgentTemplate'], ['/api/assets', 'post', 'uploadAsset'],
        ['/api/assets/{id}', 'get', 'getAsset'], ['/api/assets/{id}/content', 'get', 'getAssetContent'], ['/api/assets/{id}', 'delete', 'deleteAsset'],
      ]
      for (const [path, method, id] of expected) assert.equal(operation(path, method)?.operationId, id, `${method} ${path}`)
      for (const name of ['AgentTemplate', 'AgentTemplatePage', 'CreateAgentTemplate', 'UpdateAgentTemplate', 'TemplateAgent', 'Asset']) assert.ok(document.components.schemas[name], name)
      assert.equal(operation('/api/agent-templates', 'post').requestBody.content['application/json'].schema.$ref, '#/components/schemas/CreateAgentTemplate')
      assert.deepEqual(Object.keys(operation('/api/assets', 'post').requestBody.content).sort(), ['image/gif', 'image/jpeg', 'image/png', 'image/webp'])
      assert.equal(operation('/api/assets', 'post').responses['201'].content['application/json'].schema.$ref, '#/components/schemas/Asset')
      assert.ok(operation('/api/assets/{id}/content', 'get').responses['200'].content['image/png'])
      assert.ok(operation('/api/assets', 'post').parameters.some((p: { in: string; name: string }) => p.in === 'header' && p.name === 'idempotency-key'))
    } finally {
      await app.close()
    }
  })
})
