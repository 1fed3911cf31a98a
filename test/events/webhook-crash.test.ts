// test lane: clock — server processes killed (SIGKILL) and restarted (scripts/test.mjs).
// SIGKILL during a webhook delivery: the restarted server sends it again with the same webhook-id, in the trace
// of the request that caused the event, and the deliveries log ends with one success — never lost.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { serverGroup } from '../child-server.js'
import { dialects, freshDatabase } from '../helpers.js'
import { startReceiver } from './receiver.js'
import { waitFor } from '../wait.js'

const contentOf = (text: string) => ({ blocks: [{ type: 'rich_text', elements: [{ type: 'paragraph', children: [{ type: 'text', text }] }] }] })

const json = (method: string, body?: unknown, headers: Record<string, string> = {}) => ({ method, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'

for (const dialect of dialects()) {
  describe(`webhook delivery across a crash (${dialect})`, () => {
    it('SIGKILL while the receiver holds the request: redelivered after restart with the same webhook-id', async () => {
      const database = await freshDatabase(dialect, { ownDatabase: true })
      const receiver = await startReceiver((_request, index) => (index === 0 ? 'hang' : 200))
      const servers = serverGroup({ DATABASE_URL: database.url, TANDEM_EGRESS_ALLOW: '127.0.0.0/8', TANDEM_WEBHOOK_TIMEOUT_MS: '1000' }, { stderr: 'ignore' })
      try {
        const server = servers.start()
        const base = await server.url
        const stream = (await (await fetch(`${base}/api/streams`, json('POST', { name: 'crash' }))).json()) as { id: string }
        const hook = (await (await fetch(`${base}/api/webhooks`, json('POST', { url: receiver.url, events: ['message.created'] }))).json()) as { id: string }
        assert.equal((await fetch(`${base}/api/chat/streams/${stream.id}/messages`, json('POST', { content: contentOf('survive') }, { traceparent: TRACEPARENT }))).status, 201)
        const [first] = await receiver.waitFor(1)
        await server.stop('SIGKILL')

        const again = await servers.start().url
        const [, second] = await receiver.waitFor(2, 45000)
        assert.equal(second?.headers['webhook-id'], first?.headers['webhook-id'])
        assert.equal(second?.body, first?.body)
        for (const sent of [first, second]) assert.match(String(sent?.headers.traceparent), /^00-4bf92f3577b34da6a3ce929d0e0e4736-(?!00f067aa0ba902b7)[0-9a-f]{16}-01$/)
        type Log = Array<{ id: string; status: string; attempts: number; lastError: string | null }>
        // On a loaded machine an attempt can pass TANDEM_WEBHOOK_TIMEOUT_MS (1 s) before the restarted server reads
        // the receiver's answer: it is then retried 5 s later, and still logged once. A failure shows the log as read.
        let read: Log = []
        const log = await waitFor(async () => {
          read = ((await (await fetch(`${again}/api/webhooks/${hook.id}/deliveries`)).json()) as { data: Log }).data
          return read[0]?.status === 'succeeded' ? read : undefined
        }, { timeoutMs: 30_000, what: 'the delivery to be logged as succeeded' }).catch((error: Error) => {
          throw new Error(`${error.message}; the log: ${JSON.stringify(read)}; the receiver got ${receiver.received.length} requests`)
        })
        assert.equal(log.length, 1)
        assert.equal(log[0]?.status, 'succeeded')
        assert.equal(log[0]?.id, first?.headers['webhook-id'])
      } finally {
        await servers.stopAll()
        await receiver.close()
        await database.drop()
      }
    })
  })
}
