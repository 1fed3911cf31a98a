// docs/mcp.md's walk-through runs: its marked ```js block (an MCP client approving an agent's tool call, with the
// official SDK) is written beside this file and run with node against a listening server, after an agent's call
// of a tool that needs an approval; its output must match the ```text block after it (`…` any text), and the
// approval reads back through REST with via "mcp".
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { startFakeMcpServer, type FakeMcpServer } from '../fakes/mcp-server.js'
import { createAgent, createCycle, createStream, startRun } from '../runs/setup.js'
import { waitFor } from '../runs/agent-server.js'
import { keyFor } from '../schedules/setup.js'
import { listen } from './setup.js'
import { bearer, createKey } from '../auth.js'

const MARKER = '<!-- mcp-walkthrough -->'

function walkThrough(): { script: string; expected: string } {
  const lines = readFileSync('docs/mcp.md', 'utf8').split('\n')
  const at = lines.findIndex((line) => line.trim() === MARKER)
  assert.ok(at >= 0, `docs/mcp.md has no ${MARKER}`)
  assert.equal(lines[at + 1], '```js')
  const end = lines.indexOf('```', at + 2)
  const textStart = lines.indexOf('```text', end)
  const textEnd = lines.indexOf('```', textStart + 1)
  return { script: lines.slice(at + 2, end).join('\n'), expected: lines.slice(textStart + 1, textEnd).join('\n') }
}

for (const dialect of dialects().filter((d) => d === 'sqlite')) {
  describe('docs/mcp.md walk-through', () => {
    let app: FastifyInstance
    let files: FakeMcpServer
    before(async () => {
      app = await build(dialect, { TANDEM_WORKERS: '2', TANDEM_EGRESS_ALLOW: '127.0.0.0/8' })
      files = await startFakeMcpServer()
    })
    after(async () => {
      await app.close()
      await files.close()
    })

    it('approves an agent\'s tool call from an MCP client, as the doc shows', async () => {
      const base = await listen(app)
      assert.equal((await send(app, 'POST', '/api/mcp-servers', { name: 'files', url: files.url, approval: { 'delete_*': 'always' } })).statusCode, 201)
      const workspaceId = (await send(app, 'GET', '/api/me')).json().workspaceId
      const agentId = await createAgent(app, { providerType: 'custom_token_only', capabilities: { streaming: false, tools: ['files.delete_file'] } })
      const agentKey = (await createKey(app, { workspaceId, name: 'worker', agentId })).key
      const maria = await keyFor(app, 'maria', 'member')
      const streamId = await createStream(app)
      const run = await startRun(app, streamId, await createCycle(app, streamId, [{ agentId, operatorPool: ['@maria'] }]))
      const payload: any = await waitFor(async () => {
        const res = await send(app, 'POST', '/api/tasks/claim', {}, bearer(agentKey))
        return res.statusCode === 200 ? res.json() : undefined
      })
      const asked = await send(app, 'POST', `${payload.toolsUrl.replace(/^https?:\/\/[^/]+/, '')}/files.delete_file`, { input: { path: '/tmp/old.log' } }, bearer(payload.result.token))
      assert.equal(asked.statusCode, 202, asked.body)

      const { script, expected } = walkThrough()
      const file = join('test', 'mcp-server', `.walkthrough-${randomBytes(4).toString('hex')}.mjs`)
      writeFileSync(file, script)
      try {
        const { stdout } = await promisify(execFile)(process.execPath, [file], { env: { ...process.env, TANDEM_URL: base, TANDEM_KEY: String(maria.authorization).slice('Bearer '.length) }, timeout: 30000 })
        const pattern = new RegExp('^' + expected.split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[^\\n]*?') + '$')
        assert.match(stdout.trimEnd(), pattern)
      } finally {
        rmSync(file, { force: true })
      }
      const calls = (await send(app, 'GET', `/api/runs/${run.id}/tool-calls`)).json().data
      assert.deepEqual([calls[0].approval.decision, calls[0].approval.via, calls[0].approval.handle], ['approve', 'mcp', 'maria'])
    })
  })
}
