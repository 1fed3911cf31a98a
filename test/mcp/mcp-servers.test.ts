// MCP servers (docs/tools-and-approvals.md, "Tools") on both databases: the registry (admins write, members read, agent keys neither,
// 409 name-taken, 404 across workspaces, Idempotency-Key), every bound at the bound and one past it with its
// pointer, and GET …/tools against a real MCP server (the SDK's, on 127.0.0.1) through the real SDK client and
// the egress guard: approvals from the globs, the bearer credential received, and each failure — refused
// address, down, slow, garbage, a thousand tools, 10 MB — a 502 mcp-unreachable.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { ensureWorkspace } from '../../src/workspaces/store.js'
import { build, dialects, pointers, send } from '../helpers.js'
import { downMcpUrl, startFakeMcpServer, type FakeMcpServer } from '../fakes/mcp-server.js'
import { resolveTools } from '../../src/tools/resolve.js'
import { callMcpTool } from '../../src/tools/mcp-call.js'
import { createKey } from '../auth.js'

const MCP_UNREACHABLE = 'urn:tandem:problem:mcp-unreachable'

for (const dialect of dialects()) {
  describe(`MCP servers (${dialect})`, () => {
    let app: FastifyInstance
    let fake: FakeMcpServer
    let admin: Record<string, string>
    let member: Record<string, string>
    let agentKey: Record<string, string>
    let foreign: Record<string, string>
    before(async () => {
      fake = await startFakeMcpServer()
      app = await build(dialect, { TANDEM_AUTH: 'required', TANDEM_EGRESS_ALLOW: '127.0.0.1/32', TANDEM_TOOL_TIMEOUT_MS: '1500' })
      const db = app.database.db
      const workspaceId = await ensureWorkspace(db, 'default')
      admin = (await createKey(app, { workspaceId, name: 'admin', role: 'admin' })).headers
      member = (await createKey(app, { workspaceId, name: 'member' })).headers
      const agent = await send(app, 'POST', '/api/agents', { name: 'Bot', providerType: 'custom_token_only' }, admin)
      assert.equal(agent.statusCode, 201, agent.body)
      agentKey = (await createKey(app, { workspaceId, name: 'bot', agentId: agent.json().id })).headers
      foreign = (await createKey(app, { workspace: 'foreign', name: 'f', role: 'admin' })).headers
    })
    after(async () => {
      await app.close()
      await fake.close()
    })

    const create = (body: unknown, headers = admin) => send(app, 'POST', '/api/mcp-servers', body, headers)
    const tools = (id: string, headers = member) => send(app, 'GET', `/api/mcp-servers/${id}/tools`, undefined, headers)

    it('registers, reads, lists, changes and deletes a server; members read, only admins write, agent keys neither', async () => {
      const created = await create({ name: 'files', url: fake.url, approval: { 'delete_*': 'always', '*': 'never' } })
      assert.equal(created.statusCode, 201, created.body)
      const server = created.json()
      assert.equal(created.headers.location, `/api/mcp-servers/${server.id}`)
      assert.deepEqual({ ...server, id: undefined, createdAt: undefined, updatedAt: undefined }, { id: undefined, name: 'files', url: fake.url, credentialId: null, approval: { 'delete_*': 'always', '*': 'never' }, createdAt: undefined, updatedAt: undefined })
      assert.equal(fake.authorizations.length, 0, 'registering does not contact the server')

      assert.deepEqual((await send(app, 'GET', `/api/mcp-servers/${server.id}`, undefined, member)).json(), server)
      assert.ok((await send(app, 'GET', '/api/mcp-servers', undefined, member)).json().data.some((s: { id: string }) => s.id === server.id))
      // Agent keys, as on every other admin route, only claim and answer their tasks.
      assert.equal((await send(app, 'GET', `/api/mcp-servers/${server.id}`, undefined, agentKey)).statusCode, 403)
      assert.equal((await send(app, 'GET', `/api/mcp-servers/${server.id}/tools`, undefined, agentKey)).statusCode, 403)
      for (const writer of [member, agentKey]) {
        assert.equal((await create({ name: 'nope', url: fake.url }, writer)).statusCode, 403)
        assert.equal((await send(app, 'PATCH', `/api/mcp-servers/${server.id}`, { name: 'x' }, writer)).statusCode, 403)
        assert.equal((await send(app, 'DELETE', `/api/mcp-servers/${server.id}`, undefined, writer)).statusCode, 403)
      }

      const patched = await send(app, 'PATCH', `/api/mcp-servers/${server.id}`, { name: 'files2', approval: {} }, admin)
      assert.equal(patched.statusCode, 200, patched.body)
      assert.equal(patched.json().name, 'files2')
      assert.deepEqual(patched.json().approval, {})
      assert.equal((await send(app, 'DELETE', `/api/mcp-servers/${server.id}`, undefined, admin)).statusCode, 204)
      assert.equal((await send(app, 'GET', `/api/mcp-servers/${server.id}`, undefined, admin)).statusCode, 404)
      assert.equal((await send(app, 'DELETE', `/api/mcp-servers/${server.id}`, undefined, admin)).statusCode, 404)
    })

    it('keeps names unique in a workspace (409 name-taken on create and rename), not across workspaces', async () => {
      const first = (await create({ name: 'taken', url: fake.url })).json()
      const again = await create({ name: 'taken', url: fake.url })
      assert.equal(again.statusCode, 409)
      assert.equal(again.json().type, 'urn:tandem:problem:name-taken')
      assert.deepEqual(pointers(again), ['/name'])
      const other = (await create({ name: 'other', url: fake.url })).json()
      const rename = await send(app, 'PATCH', `/api/mcp-servers/${other.id}`, { name: 'taken' }, admin)
      assert.equal(rename.statusCode, 409)
      assert.equal((await send(app, 'PATCH', `/api/mcp-servers/${first.id}`, { name: 'taken' }, admin)).statusCode, 200, 'its own name is not taken')
      assert.equal((await create({ name: 'taken', url: fake.url }, foreign)).statusCode, 201)
    })

    it('answers another workspace\'s server with 404 on every route', async () => {
      const server = (await create({ name: 'private', url: fake.url })).json()
      for (const [method, url, body] of [
        ['GET', `/api/mcp-servers/${server.id}`, undefined],
        ['GET', `/api/mcp-servers/${server.id}/tools`, undefined],
        ['PATCH', `/api/mcp-servers/${server.id}`, { name: 'mine' }],
        ['DELETE', `/api/mcp-servers/${server.id}`, undefined],
      ] as const) {
        assert.equal((await send(app, method, url, body, foreign)).statusCode, 404, `${method} ${url}`)
      }
      assert.ok(!(await send(app, 'GET', '/api/mcp-servers?limit=100', undefined, foreign)).json().data.some((s: { id: string }) => s.id === server.id))
    })

    it('replays a POST with the same Idempotency-Key and creates one server', async () => {
      const headers = { ...admin, 'idempotency-key': `mcp-${dialect}` }
      const first = await create({ name: 'idem', url: fake.url }, headers)
      const second = await create({ name: 'idem', url: fake.url }, headers)
      assert.equal(first.statusCode, 201)
      assert.equal(second.statusCode, 201)
      assert.equal(second.json().id, first.json().id)
    })

    it('validates every field at its bound and one past it, naming each with a pointer and storing nothing', async () => {
      const ok = async (body: unknown) => {
        const res = await create(body)
        assert.equal(res.statusCode, 201, `${JSON.stringify(body).slice(0, 200)}: ${res.body}`)
        await send(app, 'DELETE', `/api/mcp-servers/${res.json().id}`, undefined, admin)
      }
      const bad = async (body: unknown, expected: string[]) => {
        const res = await create(body)
        assert.equal(res.statusCode, 400, res.body)
        assert.deepEqual([...new Set(pointers(res))], expected, res.body)
      }
      await ok({ name: 'a', url: fake.url })
      await ok({ name: `a${'b'.repeat(31)}`, url: fake.url })
      await bad({ name: `a${'b'.repeat(32)}`, url: fake.url }, ['/name'])
      for (const name of ['', '1abc', 'Abc', '_a', 'a.b', 'a b']) await bad({ name, url: fake.url }, ['/name'])
      await ok({ name: 'a_b-c9', url: fake.url })
      for (const url of ['ftp://example.com/mcp', 'example.com/mcp', 'http://', 'not a url']) await bad({ name: 'u', url }, ['/url'])
      await ok({ name: 'u', url: `https://example.com/${'p'.repeat(2048 - 20)}` })
      await bad({ name: 'u', url: `https://example.com/${'p'.repeat(2048 - 19)}` }, ['/url'])
      await bad({ name: 'c', url: fake.url, credentialId: 'nope' }, ['/credentialId'])
      const globs = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`tool_${i}_*`, 'always']))
      await ok({ name: 'g', url: fake.url, approval: globs(50) })
      await bad({ name: 'g', url: fake.url, approval: globs(51) }, ['/approval'])
      await ok({ name: 'g', url: fake.url, approval: { ['x'.repeat(128)]: 'never' } })
      await bad({ name: 'g', url: fake.url, approval: { ['x'.repeat(129)]: 'never' } }, ['/approval'])
      await bad({ name: 'g', url: fake.url, approval: { '': 'never' } }, ['/approval'])
      await bad({ name: 'g', url: fake.url, approval: { '*': 'sometimes' } }, ['/approval/*'])
      await bad({ name: 'g', url: fake.url, approval: ['*'] }, ['/approval'])
      await bad({ name: 'g', url: fake.url, extra: 1 }, ['/extra'])
      await bad({ url: fake.url }, ['/name'])
      const server = (await create({ name: 'patchme', url: fake.url })).json()
      const patch = await send(app, 'PATCH', `/api/mcp-servers/${server.id}`, { name: 'Bad', url: 'ftp://x' }, admin)
      assert.equal(patch.statusCode, 400)
      assert.deepEqual(pointers(patch), ['/name', '/url'])
      assert.equal((await send(app, 'PATCH', `/api/mcp-servers/${server.id}`, {}, admin)).statusCode, 400)
      assert.deepEqual((await send(app, 'GET', `/api/mcp-servers/${server.id}`, undefined, admin)).json(), server, 'nothing changed')
    })

    it('lists the live tools with each one\'s approval from the most specific glob, and sends the credential as a bearer token', async () => {
      const credential = (await send(app, 'POST', '/api/credentials', { name: 'MCP token', secret: 'mcp-secret-token-1234' }, admin)).json()
      const server = (await create({ name: 'live', url: fake.url, credentialId: credential.id, approval: { '*': 'never', 'delete_*': 'always', 'big': 'always', 'b*': 'never' } })).json()
      const before = fake.authorizations.length
      const res = await tools(server.id)
      assert.equal(res.statusCode, 200, res.body)
      const listed = res.json().data as { name: string; description: string; inputSchema: { properties?: Record<string, unknown> }; approval: string }[]
      const byName = Object.fromEntries(listed.map((t) => [t.name, t]))
      assert.deepEqual(Object.keys(byName).sort(), ['big', 'delete_file', 'echo', 'fail', 'huge', 'throws'])
      assert.equal(byName.echo?.description, 'Says the text back.')
      assert.ok(byName.echo?.inputSchema.properties?.text)
      assert.equal(byName.echo?.approval, 'never')
      assert.equal(byName.delete_file?.approval, 'always')
      assert.equal(byName.big?.approval, 'always', 'an exact name beats b*')
      const received = fake.authorizations.slice(before)
      assert.ok(received.length > 0)
      assert.ok(received.every((h) => h === 'Bearer mcp-secret-token-1234'), JSON.stringify(received))
      assert.ok(!res.body.includes('mcp-secret-token-1234'))

      const none = (await create({ name: 'anon', url: fake.url })).json()
      const at = fake.authorizations.length
      assert.equal((await tools(none.id)).statusCode, 200)
      assert.ok(fake.authorizations.slice(at).every((h) => h === undefined))
    })

    it('answers 502 mcp-unreachable for a refused address, a down server, a slow one, garbage, a thousand tools and 10 MB', async () => {
      const unreachable = async (name: string, url: string, detail: RegExp) => {
        const server = (await create({ name, url })).json()
        const res = await tools(server.id)
        assert.equal(res.statusCode, 502, `${name}: ${res.body}`)
        assert.equal(res.json().type, MCP_UNREACHABLE)
        assert.match(res.json().detail, detail, name)
      }
      // 10.0.0.1 is private and outside TANDEM_EGRESS_ALLOW: the guard refuses it before any socket exists.
      await unreachable('private-net', 'http://10.0.0.1:8080/mcp', /not contacted: Refused to connect to 10\.0\.0\.1: not a public address/)
      await unreachable('down', await downMcpUrl(), /could not be used/)

      const odd = await startFakeMcpServer()
      try {
        odd.behaviour.delayMs = 5000
        await unreachable('slow', odd.url, /did not answer within 1500 ms/)
        odd.behaviour.delayMs = 0
        odd.behaviour.garbage = '{"hello": "world"}'
        await unreachable('garbage', odd.url, /answered with something that is not MCP/)
        odd.behaviour.garbage = 'not json at all'
        await unreachable('garbage2', odd.url, /could not be used/)
        odd.behaviour.garbage = null
        odd.behaviour.extraTools = 994
        const atBound = (await create({ name: 'many-ok', url: odd.url })).json()
        const thousand = await tools(atBound.id)
        assert.equal(thousand.statusCode, 200, thousand.body)
        assert.equal(thousand.json().data.length, 1000, 'six tools and 994 extra: exactly 1,000')
        odd.behaviour.extraTools = 995
        await unreachable('many', odd.url, /lists more than 1000 tools/)
        odd.behaviour.extraTools = 0
        odd.behaviour.echoDescriptionBytes = 10 * 1024 * 1024
        await unreachable('huge', odd.url, /more than 4194304 bytes/)
      } finally {
        await odd.close()
      }
    })

    it('declares every operation in the OpenAPI document with named schemas and Idempotency-Key on POST', async () => {
      const document = (await send(app, 'GET', '/openapi.json')).json()
      const operation = (path: string, method: string) => document.paths[path]?.[method]
      for (const [path, method, id] of [
        ['/api/mcp-servers', 'post', 'createMcpServer'], ['/api/mcp-servers', 'get', 'listMcpServers'],
        ['/api/mcp-servers/{id}', 'get', 'getMcpServer'], ['/api/mcp-servers/{id}', 'patch', 'updateMcpServer'],
        ['/api/mcp-servers/{id}', 'delete', 'deleteMcpServer'], ['/api/mcp-servers/{id}/tools', 'get', 'listMcpServerTools'],
      ] as const) assert.equal(operation(path, method)?.operationId, id, `${method} ${path}`)
      for (const name of ['McpServer', 'CreateMcpServer', 'UpdateMcpServer', 'McpTool', 'McpToolList', 'McpApproval']) assert.ok(document.components.schemas[name], name)
      assert.equal(operation('/api/mcp-servers', 'post').requestBody.content['application/json'].schema.$ref, '#/components/schemas/CreateMcpServer')
      assert.equal(operation('/api/mcp-servers/{id}/tools', 'get').responses['200'].content['application/json'].schema.$ref, '#/components/schemas/McpToolList')
      assert.ok(operation('/api/mcp-servers', 'post').parameters.some((p: { in: string; name: string }) => p.in === 'header' && p.name === 'idempotency-key'))
    })

    it('never echoes the credential\'s secret: a server that repeats the Authorization header in its 401 has it redacted in the 502, in run warnings and in a call\'s error', async () => {
      const secret = 'mcp-echoed-secret-7f3a9c2e'
      const echo = await startFakeMcpServer({ echoAuthorization: true })
      try {
        const credential = (await send(app, 'POST', '/api/credentials', { name: 'echoed', secret }, admin)).json()
        const server = (await create({ name: 'echoer', url: echo.url, credentialId: credential.id })).json()
        const res = await tools(server.id)
        assert.equal(res.statusCode, 502, res.body)
        assert.equal(echo.authorizations.at(-1), `Bearer ${secret}`, 'the server did get the secret')
        assert.match(res.json().detail, /could not be used/)
        assert.ok(!res.body.includes(secret) && !res.body.includes(secret.slice(0, 12)), res.body)
        const deps = { db: app.database.db, guard: app.egress, timeoutMs: 1500 }
        const workspaceId = await ensureWorkspace(app.database.db, 'default')
        const resolved = await resolveTools(deps, workspaceId, ['echoer.*'])
        assert.equal(resolved.warnings.length, 1)
        assert.ok(!resolved.warnings[0]!.includes(secret), resolved.warnings[0])
        const call = await callMcpTool(deps, { workspaceId, name: 'echoer', url: echo.url, credentialId: credential.id }, 'echo', { text: 'hi' })
        assert.equal(call.ok, false)
        assert.ok(!JSON.stringify(call).includes(secret), JSON.stringify(call))
      } finally {
        await echo.close()
      }
    })

    it('a credential that no longer exists is a clear 502 naming it', async () => {
      const server = (await create({ name: 'lost', url: fake.url, credentialId: '0190f5f2-0000-7000-8000-000000000000' })).json()
      const res = await tools(server.id)
      assert.equal(res.statusCode, 502)
      assert.match(res.json().detail, /names the credential 0190f5f2-0000-7000-8000-000000000000, which does not exist/)
    })
  })
}
