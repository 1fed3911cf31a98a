// Approval globs in linear time, and tool names bounded: a hostile MCP server's 120,000-character tool name used to
// freeze the instance on every listing (a regular expression per glob, backtracking quadratically); now the match
// is linear, and a listed name past 128 characters fails the listing (502 mcp-unreachable) on both databases.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { approvalOf, globMatches } from '../../src/mcp/approval.js'
import { MAX_TOOL_NAME_LENGTH } from '../../src/mcp/client.js'
import { build, dialects, send } from '../helpers.js'
import { startFakeMcpServer, type FakeMcpServer } from '../fakes/mcp-server.js'

/** The reference: `*` any run of characters, everything else itself. */
const reference = (glob: string, name: string) => new RegExp(`^${glob.split('*').map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[\\s\\S]*')}$`).test(name)

describe('approval globs', () => {
  it('match as the reference does on 20,000 random globs and names', () => {
    let seed = 7
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648) % n)
    const word = (alphabet: string, max: number) => Array.from({ length: random(max) }, () => alphabet[random(alphabet.length)]).join('')
    for (let i = 0; i < 20000; i++) {
      const glob = word('ab*.', 7)
      const name = word('ab.', 9)
      assert.equal(globMatches(glob, name), reference(glob, name), `${JSON.stringify(glob)} on ${JSON.stringify(name)}`)
    }
  })

  it('take linear time on a long name (the regular expression took quadratic)', () => {
    const name = 'a'.repeat(120000)
    const globs = { '*a*b': 'always', '*a*a*a*c*': 'always', 'a*a*a*a*a': 'never', '*': 'never' } as const
    const started = performance.now()
    assert.equal(approvalOf(globs, name), 'never')
    assert.equal(approvalOf(globs, `${name}b`), 'always')
    const ms = performance.now() - started
    assert.ok(ms < 100, `${ms.toFixed(1)} ms`)
  })
})

for (const dialect of dialects()) {
  describe(`MCP tool names (${dialect})`, () => {
    let app: FastifyInstance
    let fake: FakeMcpServer
    before(async () => {
      fake = await startFakeMcpServer()
      app = await build(dialect, { TANDEM_EGRESS_ALLOW: '127.0.0.1/32', TANDEM_TOOL_TIMEOUT_MS: '5000' })
    })
    after(async () => {
      await app.close()
      await fake.close()
    })

    it(`lists a tool name of ${MAX_TOOL_NAME_LENGTH} characters; one longer fails the listing with a 502 that says so`, async () => {
      const server = (await send(app, 'POST', '/api/mcp-servers', { name: `long-${dialect}`, url: fake.url, approval: { '*a*b': 'always' } })).json()
      fake.behaviour.longToolName = MAX_TOOL_NAME_LENGTH
      const ok = await send(app, 'GET', `/api/mcp-servers/${server.id}/tools`)
      assert.equal(ok.statusCode, 200, ok.body)
      assert.ok(ok.json().data.some((tool: { name: string }) => tool.name.length === MAX_TOOL_NAME_LENGTH))
      for (const length of [MAX_TOOL_NAME_LENGTH + 1, 120000]) {
        fake.behaviour.longToolName = length
        const res = await send(app, 'GET', `/api/mcp-servers/${server.id}/tools`)
        assert.equal(res.statusCode, 502, res.body)
        assert.match(res.json().detail, new RegExp(`a tool whose name has ${length} characters; a tool name has 1 to ${MAX_TOOL_NAME_LENGTH}`))
      }
      fake.behaviour.longToolName = 0
    })
  })
}
