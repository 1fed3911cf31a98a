// test lane: clock — server processes killed (SIGKILL) and restarted (scripts/test.mjs).
// The polled vendors survive a crash of the service while they wait: a real server process delivers to Cursor
// (or Copilot Studio over Direct Line), is killed with SIGKILL between two polls, and a new process on the same
// database picks the poll up where it was: the run finishes, the vendor work was started once, and the answer
// is posted once.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { request, serverGroup } from '../child-server.js'
import { dialects, freshDatabase } from '../helpers.js'
import { SECRET } from '../fakes/vendors/context.js'
import { startCursorFake } from '../fakes/vendors/cursor.js'
import { startDirectLineFake } from '../fakes/vendors/direct-line.js'
import { waitFor } from './agent-server.js'

const SECRET_KEY = randomBytes(32).toString('base64')

async function created(base: string, path: string, body: unknown): Promise<any> {
  const res = await request(base, 'POST', path, body)
  assert.equal(res.status, 201, JSON.stringify(res.json))
  return res.json
}

interface PolledVendor {
  providerType: string
  start(): Promise<{ url: string; close(): Promise<void> }>
  agent(url: string): Record<string, unknown>
  /** The vendor keeps working: every look says "not yet". */
  keepWorking(): void
  /** How many looks the vendor has had, and how many times its work was started. */
  looks(): number
  started(): number
  /** The vendor is done: the next look answers. */
  finish(text: string): void
}

function cursorVendor(): PolledVendor {
  let fake: Awaited<ReturnType<typeof startCursorFake>>
  return {
    providerType: 'cursor',
    start: async () => (fake = await startCursorFake(SECRET)),
    agent: (url) => ({ authMode: 'api_key', endpointUrl: url, config: { repository: 'https://github.com/acme/app', ref: 'main' } }),
    keepWorking: () => fake.looks.set({ agentStatus: 'RUNNING' }),
    looks: () => fake.requests.filter((r) => r.method === 'GET').length,
    started: () => fake.launched.length,
    finish: (text) => fake.looks.set({ agentStatus: 'FINISHED', summary: text, noBranch: true }),
  }
}

function directLineVendor(): PolledVendor {
  let fake: Awaited<ReturnType<typeof startDirectLineFake>>
  return {
    providerType: 'copilot_studio',
    start: async () => (fake = await startDirectLineFake(SECRET)),
    agent: (url) => ({ authMode: 'direct_line', endpointUrl: url }),
    keepWorking: () => {
      fake.bot.looksBeforeReply = Number.MAX_SAFE_INTEGER
    },
    looks: () => fake.requests.filter((r) => r.method === 'GET').length,
    started: () => fake.conversations.size,
    finish: (text) => {
      fake.bot.replies = [text]
      fake.bot.looksBeforeReply = 0
    },
  }
}

for (const dialect of dialects()) {
  describe(`polled vendors across a crash (${dialect})`, () => {
    for (const vendor of [cursorVendor(), directLineVendor()]) {
      it(`${vendor.providerType}: a SIGKILL while waiting loses nothing and starts nothing twice`, { timeout: 120000 }, async () => {
        const database = await freshDatabase(dialect, { ownDatabase: true })
        const fake = await vendor.start()
        const servers = serverGroup({
          DATABASE_URL: database.url,
          TANDEM_AUTH: 'local',
          TANDEM_SECRET_KEY: SECRET_KEY,
          TANDEM_POLL_INTERVAL_MS: '200',
          TANDEM_DISPATCH_TIMEOUT_MS: '5000',
          TANDEM_FAILOVER_S: '6',
          TANDEM_WORKERS: '2',
          TANDEM_EGRESS_ALLOW: '127.0.0.0/8',
        })
        try {
          vendor.keepWorking()
          const first = servers.start()
          const base = await first.url
          const stream = await created(base, '/api/streams', { name: 'crash' })
          const credential = await created(base, '/api/credentials', { name: 'vendor key', secret: SECRET })
          const agent = await created(base, '/api/agents', { name: 'polled', providerType: vendor.providerType, credentialId: credential.id, ...vendor.agent(fake.url) })
          const cycle = await created(base, `/api/cycles/streams/${stream.id}/cycles`, {
            triggerName: 'crash',
            description: 'Fix a bug',
            phasesTemplate: [{ id: '0193a5b4-0000-7000-8000-000000000123', agentId: agent.id, goal: 'Fix it', instructions: 'Fix the bug', autoAdvance: true, phaseName: 'Fix', operatorPool: [] }],
          })
          const run = await created(base, `/api/cycles/streams/${stream.id}/cycles/${cycle.id}/runs`, { input: {} })

          // Kill the service between two polls, once the vendor has been looked at twice.
          await waitFor(async () => (vendor.looks() >= 2 ? true : undefined), 30000, 'two polls')
          await first.stop('SIGKILL')
          assert.equal(vendor.started(), 1)
          const looksBefore = vendor.looks()
          vendor.finish('Done after the crash.')

          const again = await servers.start().url
          const done = await waitFor(async () => {
            const res = await request(again, 'GET', `/api/runs/${run.id}`)
            return ['succeeded', 'failed'].includes(res.json?.status) ? res.json : undefined
          }, 60000, 'the run to finish after the restart')
          assert.equal(done.status, 'succeeded', JSON.stringify(done.error))
          assert.equal(done.phases[0].output.text, 'Done after the crash.')
          assert.ok(vendor.looks() > looksBefore, 'the poll resumed')
          assert.equal(vendor.started(), 1, 'the vendor work was started once')
          const messages = (await request(again, 'GET', `/api/chat/streams/${stream.id}/messages`)).json.data
          assert.equal(messages.filter((m: any) => m.authorType === 'agent').length, 1, 'the answer was posted once')
        } finally {
          await servers.stopAll('SIGKILL')
          await fake.close()
          await database.drop()
        }
      })
    }
  })
}
