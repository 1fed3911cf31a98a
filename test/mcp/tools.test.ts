// The tool layer the run engine will call (src/tools/), against a real MCP server built with the SDK through the
// real SDK client, on both databases: resolving `capabilities.tools` entries (with warnings for entries that name
// no tool), callMcpTool's bounds (input 64 KiB at the bound and one past, output cut past 64 KiB with a marker,
// 10 MB, timeout, cancel) and failures as values (down, refused by the egress guard, garbage, a tool's own error);
// approval globs and the vendor-name mapping as pure functions.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { ensureWorkspace } from '../../src/workspaces/store.js'
import { insertCredential } from '../../src/credentials/store.js'
import { createEgressGuard } from '../../src/net/egress.js'
import { approvalOf } from '../../src/mcp/approval.js'
import type { McpDeps, McpTarget } from '../../src/mcp/client.js'
import { insertMcpServer } from '../../src/mcp/store.js'
import { callMcpTool, cutOutput } from '../../src/tools/mcp-call.js'
import { MAX_TOOL_INPUT_BYTES, MAX_TOOL_OUTPUT_BYTES } from '../../src/tools/limits.js'
import { resolveTools } from '../../src/tools/resolve.js'
import { vendorToolName, vendorToolNames } from '../../src/tools/vendor-names.js'
import { build, dialects } from '../helpers.js'
import { downMcpUrl, startFakeMcpServer, type FakeMcpServer } from '../fakes/mcp-server.js'

describe('approval globs', () => {
  it('lets the most specific matching glob decide, whatever the order; a tie goes to "always"; no match is "never"', () => {
    assert.equal(approvalOf({}, 'delete_file'), 'never')
    assert.equal(approvalOf({ 'delete_*': 'always', '*': 'never' }, 'delete_file'), 'always')
    assert.equal(approvalOf({ '*': 'never', 'delete_*': 'always' }, 'delete_file'), 'always')
    assert.equal(approvalOf({ '*': 'always', 'read_*': 'never' }, 'read_file'), 'never')
    assert.equal(approvalOf({ '*': 'always', 'read_*': 'never' }, 'write_file'), 'always')
    assert.equal(approvalOf({ 'delete_*': 'always', delete_file: 'never' }, 'delete_file'), 'never', 'an exact name beats a glob')
    assert.equal(approvalOf({ 'a*': 'never', '*b': 'always' }, 'ab'), 'always', 'equally specific: the safer')
    assert.equal(approvalOf({ 'file.*': 'always' }, 'fileXread'), 'never', 'a dot is itself, not any character')
    assert.equal(approvalOf({ '*_*': 'always' }, 'a_b'), 'always')
    assert.equal(approvalOf({ '*_*': 'always' }, 'ab'), 'never')
  })
})

describe('vendor tool names', () => {
  it('maps <server>.<tool> to <server>__<tool>, makes any name vendor-safe and at most 64 characters, and maps it back', () => {
    assert.equal(vendorToolName('files.read'), 'files__read')
    assert.equal(vendorToolName('tandem.read_messages'), 'tandem__read_messages')
    assert.equal(vendorToolName('files.dir.list'), 'files__dir_list')
    const long = vendorToolName(`srv.${'t'.repeat(100)}`)
    assert.equal(long.length, 64)
    assert.match(long, /^srv__t+_[0-9a-f]{8}$/)
    assert.notEqual(vendorToolName(`srv.${'t'.repeat(100)}a`), long)
    const tool = (name: string) => ({ name, description: '', inputSchema: {}, source: { kind: 'tandem' as const } })
    const names = vendorToolNames([tool('files.read'), tool('files.dir_list'), tool('files.dir.list'), tool('a.b')])
    assert.deepEqual(names.offered.map((o) => o.vendorName), ['files__read', 'files__dir_list', 'a__b'])
    assert.equal(names.toolOf('files__read')?.name, 'files.read')
    assert.equal(names.toolOf('a__b')?.name, 'a.b')
    assert.equal(names.toolOf('nope'), undefined)
    assert.equal(names.warnings.length, 1)
    assert.match(names.warnings[0] as string, /files\.dir\.list was not offered: its name for the model, files__dir_list, is already that of files\.dir_list/)
  })

  it('cuts output on a character boundary with a marker, within the bound', () => {
    assert.deepEqual(cutOutput('é'.repeat(10), 20), { output: 'é'.repeat(10), truncated: false })
    const cut = cutOutput('é'.repeat(100), 90)
    assert.ok(cut.truncated)
    assert.ok(Buffer.byteLength(cut.output) <= 90)
    assert.match(cut.output, /^é+\n\[output cut by Tandem: 200 bytes, at most 90 are kept\]$/)
  })
})

for (const dialect of dialects()) {
  describe(`tool layer (${dialect})`, () => {
    let app: FastifyInstance
    let fake: FakeMcpServer
    let deps: McpDeps
    let workspaceId: string
    let target: McpTarget
    before(async () => {
      fake = await startFakeMcpServer()
      app = await build(dialect)
      workspaceId = await ensureWorkspace(app.database.db, 'default')
      deps = { db: app.database.db, guard: createEgressGuard(['127.0.0.1/32']), timeoutMs: 1500 }
      const credential = await insertCredential(app.database.db, app.vault, workspaceId, { name: 'mcp', secret: 'tool-layer-secret-9876' })
      const server = await insertMcpServer(app.database.db, workspaceId, { name: 'files', url: fake.url, credentialId: credential.id, approval: { 'delete_*': 'always' } })
      assert.ok(server)
      target = { workspaceId, name: server.name, url: server.url, credentialId: server.credentialId }
      await insertMcpServer(app.database.db, workspaceId, { name: 'gone', url: await downMcpUrl() })
      // A server that calls itself a2a: its tools would be named a2a.*, Tandem's own name for a remote's authorization.
      await insertMcpServer(app.database.db, workspaceId, { name: 'a2a', url: fake.url })
    })
    after(async () => {
      await app.close()
      await fake.close()
    })

    it('resolves entries into tool definitions, each once, with a warning for every entry that names no tool', async () => {
      const { tools, warnings } = await resolveTools(deps, workspaceId, [
        'tandem.read_messages', 'tandem.post_message', 'tandem.ask_operator', 'tandem.fly',
        'files.echo', 'files.*', 'files.missing', 'nowhere.tool', 'gone.*', 'web_search', '.x', 'files.', 'a2a.authorize', 'a2a.*',
      ])
      const names = tools.map((t) => t.name)
      assert.deepEqual(names.slice(0, 4), ['tandem.read_messages', 'tandem.post_message', 'tandem.ask_operator', 'files.echo'])
      assert.deepEqual([...names].sort(), ['files.big', 'files.delete_file', 'files.echo', 'files.fail', 'files.huge', 'files.throws', 'tandem.ask_operator', 'tandem.post_message', 'tandem.read_messages'])
      const deleteFile = tools.find((t) => t.name === 'files.delete_file')
      assert.equal(deleteFile?.source.kind === 'mcp' && deleteFile.source.approval, 'always')
      const echo = tools.find((t) => t.name === 'files.echo')
      assert.deepEqual(echo?.source.kind === 'mcp' && { tool: echo.source.tool, approval: echo.source.approval }, { tool: 'echo', approval: 'never' })
      assert.equal(warnings.length, 9, warnings.join('\n'))
      for (const [entry, why] of [
        ['tandem.fly', /Tandem's tools are tandem\.read_messages/],
        ['files.missing', /lists no tool missing/],
        ['nowhere.tool', /no MCP server named nowhere/],
        ['gone.*', /could not be used/],
        ['web_search', /names no tool/],
        ['.x', /names no tool/],
        ['files.', /names no tool/],
        ['a2a.authorize', /Tandem's own name for a remote A2A agent's authorization/],
        ['a2a.*', /Tandem's own name for a remote A2A agent's authorization/],
      ] as const) assert.ok(warnings.some((w) => w.includes(`"${entry}"`) && why.test(w)), `${entry}: ${warnings.join('\n')}`)
    })

    it('calls a tool with the credential as a bearer token and returns its text', async () => {
      const before = fake.authorizations.length
      assert.deepEqual(await callMcpTool(deps, target, 'echo', { text: 'hello' }), { ok: true, output: 'echo: hello', truncated: false })
      assert.deepEqual(fake.calls.at(-1), { name: 'echo', arguments: { text: 'hello' } })
      assert.ok(fake.authorizations.slice(before).every((h) => h === 'Bearer tool-layer-secret-9876'))
    })

    it('takes input up to 64 KiB of JSON and fails one byte past it without reaching the server', async () => {
      const text = (bytes: number) => 'x'.repeat(bytes - Buffer.byteLength(JSON.stringify({ text: '' })))
      const atBound = await callMcpTool(deps, target, 'echo', { text: text(MAX_TOOL_INPUT_BYTES) })
      assert.equal(atBound.ok, true, JSON.stringify(atBound).slice(0, 300))
      const calls = fake.calls.length
      const requests = fake.authorizations.length
      const past = await callMcpTool(deps, target, 'echo', { text: text(MAX_TOOL_INPUT_BYTES + 1) })
      assert.deepEqual(past, { ok: false, error: `The tool input is ${MAX_TOOL_INPUT_BYTES + 1} bytes of JSON; at most ${MAX_TOOL_INPUT_BYTES} are accepted.` })
      assert.equal(fake.calls.length, calls)
      assert.equal(fake.authorizations.length, requests, 'no request at all')
      assert.deepEqual(await callMcpTool(deps, target, 'echo', ['a']), { ok: false, error: 'The tool input must be a JSON object.' })
    })

    it('gives the model at most 64 KiB of output: whole at the bound, cut with a marker one byte past it', async () => {
      const atBound = await callMcpTool(deps, target, 'big', { bytes: MAX_TOOL_OUTPUT_BYTES })
      assert.deepEqual(atBound, { ok: true, output: 'x'.repeat(MAX_TOOL_OUTPUT_BYTES), truncated: false })
      const past = await callMcpTool(deps, target, 'big', { bytes: MAX_TOOL_OUTPUT_BYTES + 1 })
      assert.ok(past.ok && past.truncated)
      assert.ok(past.ok && Buffer.byteLength(past.output) <= MAX_TOOL_OUTPUT_BYTES)
      assert.match(past.ok ? past.output : '', /\n\[output cut by Tandem: 65537 bytes, at most 65536 are kept\]$/)
    })

    it('turns every failure into a failed call, never a throw', async () => {
      const failed = async (promise: ReturnType<typeof callMcpTool>, error: RegExp) => {
        const outcome = await promise
        assert.equal(outcome.ok, false, JSON.stringify(outcome).slice(0, 300))
        assert.match(outcome.ok ? '' : outcome.error, error)
      }
      await failed(callMcpTool(deps, target, 'huge', {}), /answered with more than 4194304 bytes/)
      await failed(callMcpTool(deps, target, 'fail', {}), /^the disk is full$/)
      await failed(callMcpTool(deps, target, 'throws', {}), /kaboom/)
      await failed(callMcpTool(deps, target, 'no_such_tool', {}), /no_such_tool/)
      await failed(callMcpTool(deps, target, 'echo', { text: 42 }), /validation|Invalid|expected/i)
      await failed(callMcpTool(deps, { ...target, url: await downMcpUrl() }, 'echo', { text: 'a' }), /could not be used/)
      await failed(callMcpTool(deps, { ...target, credentialId: '0190f5f2-0000-7000-8000-000000000000' }, 'echo', { text: 'a' }), /does not exist in this workspace/)

      // The guard without 127.0.0.1 allowed refuses the address before a socket exists: the fake hears nothing.
      const requests = fake.authorizations.length
      await failed(callMcpTool({ ...deps, guard: createEgressGuard([]) }, target, 'echo', { text: 'a' }), /not contacted: Refused to connect to 127\.0\.0\.1: not a public address/)
      assert.equal(fake.authorizations.length, requests)

      const odd = await startFakeMcpServer()
      try {
        const oddTarget = { ...target, url: odd.url, credentialId: null }
        odd.behaviour.delayMs = 5000
        await failed(callMcpTool(deps, oddTarget, 'echo', { text: 'a' }), /did not answer within 1500 ms/)
        const cancel = new AbortController()
        setTimeout(() => cancel.abort(), 50)
        await failed(callMcpTool(deps, oddTarget, 'echo', { text: 'a' }, { signal: cancel.signal }), /cancelled/)
        odd.behaviour.delayMs = 0
        odd.behaviour.garbage = '<html>hello</html>'
        await failed(callMcpTool(deps, oddTarget, 'echo', { text: 'a' }), /could not be used/)
      } finally {
        await odd.close()
      }
    })
  })
}
