// POST /api/agents: every rule of spec 2.2 and 8, at both sides of each limit, on each database.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, pointers, send } from '../helpers.js'

const UUID_V4 = '3f0e8a52-7c1d-4e2b-9a6f-0123456789ab'

for (const dialect of dialects()) {
  describe(`POST /api/agents (${dialect})`, () => {
    let app: FastifyInstance
    before(async () => {
      app = await build(dialect)
    })
    after(() => app.close())

    const create = (body: unknown) => send(app, 'POST', '/api/agents', body)
    const count = async () => (await send(app, 'GET', '/api/agents?limit=100')).json().data.length as number

    it('creates an agent from a name alone, with every default and 201 + Location', async () => {
      const res = await create({ name: 'Scout' })
      assert.equal(res.statusCode, 201)
      const agent = res.json()
      assert.equal(res.headers.location, `/api/agents/${agent.id}`)
      assert.match(agent.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      assert.deepEqual(
        { ...agent, id: undefined, createdAt: undefined, updatedAt: undefined },
        {
          id: undefined,
          providerType: 'custom_webhook',
          authMode: null,
          name: 'Scout',
          avatarAssetId: null,
          credentialId: null,
          config: {},
          instructions: null,
          templateId: null,
          capabilities: { streaming: false, tools: [] },
          endpointUrl: null,
          createdAt: undefined,
          updatedAt: undefined,
        },
      )
      assert.match(agent.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      assert.equal(agent.createdAt, agent.updatedAt)
      const read = await send(app, 'GET', res.headers.location as string)
      assert.deepEqual(read.json(), agent)
    })

    it('stores every field as sent, config included (any properties, nested, key order kept)', async () => {
      const body = {
        providerType: 'copilot_studio',
        authMode: 'direct_line',
        name: 'Helpdesk',
        avatarAssetId: UUID_V4.toUpperCase(),
        credentialId: '00000000-0000-0000-0000-000000000000',
        config: { zeta: 1, alpha: { nested: [1, 'two', null, { deep: true }] }, empty: {}, 'odd key': 'ü' },
        instructions: 'Answer IT questions.',
        templateId: 'tpl-42 any format',
        capabilities: { streaming: true, tools: ['kb_search', 'ticket'] },
        endpointUrl: 'https://bots.example.com/hooks/1?x=1#frag',
      }
      const res = await create(body)
      assert.equal(res.statusCode, 201)
      const agent = res.json()
      assert.equal(agent.avatarAssetId, UUID_V4, 'ids come back in lower case')
      assert.deepEqual(agent.config, body.config)
      assert.equal(JSON.stringify(agent.config), JSON.stringify(body.config), 'config key order is kept')
      const read = (await send(app, 'GET', `/api/agents/${agent.id}`)).json()
      assert.deepEqual(
        { ...read, id: undefined, createdAt: undefined, updatedAt: undefined },
        { ...body, avatarAssetId: UUID_V4, id: undefined, createdAt: undefined, updatedAt: undefined },
      )
    })

    it('accepts each provider type and auth mode, and rejects any other value naming the allowed ones', async () => {
      for (const providerType of ['custom_webhook', 'custom_token_only', 'claude', 'mistral', 'elevenlabs', 'copilot_studio', 'cursor']) {
        assert.equal((await create({ name: 'p', providerType })).statusCode, 201, providerType)
      }
      for (const authMode of ['api_key', 'direct_line', 'none']) {
        assert.equal((await create({ name: 'a', authMode })).statusCode, 201, authMode)
      }
      for (const [field, value] of [['providerType', 'openai'], ['providerType', 'Claude'], ['authMode', 'oauth'], ['authMode', '']]) {
        const res = await create({ name: 'x', [field as string]: value })
        assert.equal(res.statusCode, 400)
        const [error] = res.json().errors
        assert.equal(error.pointer, `/${field}`)
        assert.match(error.detail, field === 'providerType' ? /custom_webhook.*cursor/ : /api_key, direct_line, none/)
      }
    })

    it('name: 1 to 120 characters, counted in code points', async () => {
      assert.equal((await create({ name: 'x' })).statusCode, 201)
      assert.equal((await create({ name: 'n'.repeat(120) })).statusCode, 201)
      assert.equal((await create({ name: '😀'.repeat(120) })).statusCode, 201, '120 astral characters are 120, not 240')
      for (const name of ['', 'n'.repeat(121), '😀'.repeat(121)]) {
        const res = await create({ name })
        assert.equal(res.statusCode, 400)
        assert.deepEqual(pointers(res), ['/name'])
      }
    })

    it('name is required and must be a string', async () => {
      for (const body of [{}, { name: null }, { name: 123 }, { name: ['x'] }]) {
        const res = await create(body)
        assert.equal(res.statusCode, 400)
        assert.deepEqual(pointers(res), ['/name'])
      }
    })

    it('instructions: at most 20000 characters', async () => {
      assert.equal((await create({ name: 'i', instructions: '' })).statusCode, 201)
      assert.equal((await create({ name: 'i', instructions: 'w'.repeat(20000) })).statusCode, 201)
      const res = await create({ name: 'i', instructions: 'w'.repeat(20001) })
      assert.equal(res.statusCode, 400)
      assert.deepEqual(pointers(res), ['/instructions'])
      assert.match(res.json().errors[0].detail, /at most 20000/)
    })

    it('endpointUrl: an absolute http(s) URI of at most 2048 characters', async () => {
      const base = 'https://example.com/'
      assert.equal((await create({ name: 'e', endpointUrl: base + 'a'.repeat(2048 - base.length) })).statusCode, 201)
      assert.equal((await create({ name: 'e', endpointUrl: 'HTTP://EXAMPLE.COM' })).statusCode, 201)
      assert.equal((await create({ name: 'e', endpointUrl: 'http://127.0.0.1:8080/x' })).statusCode, 201)
      for (const endpointUrl of [base + 'a'.repeat(2049 - base.length), 'ftp://example.com/x', '/relative/path', 'example.com', 'https://', 'https://exa mple.com', 'mailto:a@b.c', '']) {
        const res = await create({ name: 'e', endpointUrl })
        assert.equal(res.statusCode, 400, endpointUrl.slice(0, 40))
        assert.deepEqual([...new Set(pointers(res))], ['/endpointUrl'])
      }
    })

    it('capabilities: streaming a boolean, tools at most 50 strings, nothing else', async () => {
      const tools = (n: number) => Array.from({ length: n }, (_, i) => `tool${i}`)
      const ok = await create({ name: 'c', capabilities: { tools: tools(50) } })
      assert.equal(ok.statusCode, 201)
      assert.deepEqual(ok.json().capabilities, { streaming: false, tools: tools(50) })
      assert.deepEqual((await create({ name: 'c', capabilities: { streaming: true } })).json().capabilities, { streaming: true, tools: [] })
      assert.deepEqual((await create({ name: 'c', capabilities: {} })).json().capabilities, { streaming: false, tools: [] })
      const cases: Array<[unknown, string]> = [
        [{ tools: tools(51) }, '/capabilities/tools'],
        [{ tools: [1] }, '/capabilities/tools/0'],
        [{ tools: 'git' }, '/capabilities/tools'],
        [{ streaming: 'true' }, '/capabilities/streaming'],
        [{ streaming: 1 }, '/capabilities/streaming'],
        [{ voice: true }, '/capabilities/voice'],
        ['all', '/capabilities'],
        [null, '/capabilities'],
      ]
      for (const [capabilities, pointer] of cases) {
        const res = await create({ name: 'c', capabilities })
        assert.equal(res.statusCode, 400, JSON.stringify(capabilities))
        assert.deepEqual(pointers(res), [pointer])
      }
    })

    it('avatarAssetId and credentialId: spec UUIDs only', async () => {
      for (const id of ['00000000-0000-0000-0000-000000000000', 'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF', '01890a5d-ac96-774b-bcce-b302099a8057']) {
        assert.equal((await create({ name: 'u', avatarAssetId: id, credentialId: id })).statusCode, 201, id)
      }
      for (const id of ['01890a5d-ac96-074b-bcce-b302099a8057', '01890a5d-ac96-974b-bcce-b302099a8057', '01890a5d-ac96-774b-ccce-b302099a8057', 'not-a-uuid', '01890a5dac96774bbcceb302099a8057']) {
        const res = await create({ name: 'u', avatarAssetId: id, credentialId: id })
        assert.equal(res.statusCode, 400, id)
        assert.deepEqual(pointers(res), ['/avatarAssetId', '/credentialId'])
      }
    })

    it('config must be an object; templateId a string', async () => {
      for (const config of [[], 'x', 1, null]) {
        assert.deepEqual(pointers(await create({ name: 'c', config })), ['/config'])
      }
      assert.deepEqual(pointers(await create({ name: 't', templateId: 7 })), ['/templateId'])
    })

    it('rejects unknown properties instead of dropping them, and never coerces types', async () => {
      assert.deepEqual(pointers(await create({ name: 'x', id: UUID_V4 })), ['/id'])
      assert.deepEqual(pointers(await create({ name: 'x', Name: 'y' })), ['/Name'])
      assert.deepEqual(pointers(await create({ name: 'x', capabilities: { streaming: 'false' } })), ['/capabilities/streaming'])
      assert.deepEqual(pointers(await create({ name: 'x', instructions: 5 })), ['/instructions'])
    })

    it('lists every violation of a request in one 400, and changes nothing', async () => {
      const before = await count()
      const res = await create({
        providerType: 'gpt',
        authMode: 'password',
        avatarAssetId: 'nope',
        instructions: 'i'.repeat(20001),
        capabilities: { streaming: 'yes', tools: Array(51).fill('t') },
        endpointUrl: 'gopher://x',
        extra: true,
      })
      assert.equal(res.statusCode, 400)
      assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8')
      const problem = res.json()
      assert.equal(problem.type, 'urn:tandem:problem:validation-error')
      assert.equal(problem.status, 400)
      assert.deepEqual([...new Set(pointers(res))], [
        '/authMode', '/avatarAssetId', '/capabilities/streaming', '/capabilities/tools', '/endpointUrl', '/extra', '/instructions', '/name', '/providerType',
      ])
      for (const error of problem.errors) assert.equal(typeof error.detail, 'string')
      assert.equal(await count(), before)
    })

    it('body must be a JSON object sent as application/json', async () => {
      for (const payload of ['[]', '"agent"', '42', 'null']) {
        const res = await app.inject({ method: 'POST', url: '/api/agents', payload, headers: { 'content-type': 'application/json' } })
        assert.equal(res.statusCode, 400, payload)
      }
      const malformed = await app.inject({ method: 'POST', url: '/api/agents', payload: '{"name": "x",', headers: { 'content-type': 'application/json' } })
      assert.equal(malformed.statusCode, 400)
      assert.equal(malformed.json().type, 'urn:tandem:problem:malformed-json')
      const charset = await app.inject({ method: 'POST', url: '/api/agents', payload: '{"name":"x"}', headers: { 'content-type': 'application/json; charset=utf-8' } })
      assert.equal(charset.statusCode, 201)
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
        const res = await app.inject({ method: 'POST', url: '/api/agents', payload: '{"name":"x"}', headers: { 'content-type': type } })
        assert.equal(res.statusCode, 415, type)
        assert.equal(res.json().type, 'urn:tandem:problem:unsupported-media-type')
      }
    })

    it('rejects bodies over 1 MiB with 413', async () => {
      const before = await count()
      const res = await create({ name: 'big', config: { blob: 'x'.repeat(1024 * 1024) } })
      assert.equal(res.statusCode, 413)
      assert.equal(res.json().type, 'urn:tandem:problem:payload-too-large')
      assert.equal(await count(), before)
    })

    it('rejects __proto__ keys without polluting anything', async () => {
      const res = await app.inject({ method: 'POST', url: '/api/agents', payload: '{"name":"p","config":{"__proto__":{"polluted":true}}}', headers: { 'content-type': 'application/json' } })
      assert.equal(res.statusCode, 400)
      assert.equal(({} as Record<string, unknown>).polluted, undefined)
    })
  })
}

for (const dialect of dialects()) {
  describe(`text with U+0000 (${dialect})`, () => {
    it('is refused on both databases with a pointer at each field that holds it', async () => {
      const app = await build(dialect)
      try {
        const res = await app.inject({
          method: 'POST',
          url: '/api/agents',
          payload: '{"name":"a\\u0000b","config":{"k\\u0000":"v","ok":"\\\\u0000 is text"},"capabilities":{"tools":["x","\\u0000"]}}',
          headers: { 'content-type': 'application/json' },
        })
        assert.equal(res.statusCode, 400)
        assert.deepEqual(pointers(res), ['/capabilities/tools/1', '/config/k\u0000', '/name'])
        const literal = await app.inject({ method: 'POST', url: '/api/agents', payload: '{"name":"\\\\u0000 is six characters"}', headers: { 'content-type': 'application/json' } })
        assert.equal(literal.statusCode, 201)
        assert.equal(literal.json().name, '\\u0000 is six characters')
      } finally {
        await app.close()
      }
    })
  })
}
