// The inbox's live feed announces at once the items of streams created after it connected: before, such a stream
// was followed only at the next keep-alive (15 s by default), and an item that appeared and was decided in that
// window was never announced. The keep-alive here is the default; the item must come within 5 s.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { createParser } from 'eventsource-parser'
import { build, dialects, send } from '../helpers.js'
import { waitFor } from '../runs/agent-server.js'
import { runIn } from '../runs/setup.js'
import { keyFor, waitingStream } from '../schedules/setup.js'

for (const dialect of dialects()) {
  describe(`inbox feed and new streams (${dialect})`, () => {
    let app: FastifyInstance
    let maria: Record<string, string>
    before(async () => {
      app = await build(dialect, {}, { ownDatabase: true })
      maria = await keyFor(app, 'maria', 'member')
      await app.listen({ port: 0, host: '127.0.0.1' })
    })
    after(async () => app.close())

    it('announces an item of a stream created after the feed connected at once, and its removal', { timeout: 30000 }, async () => {
      assert.equal(app.config.sseKeepAliveMs, 15000, 'the default keep-alive: no rescan before the item is due')
      const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
      const controller = new AbortController()
      const events: Array<{ event: string; data: any }> = []
      const res = await fetch(`${base}/api/me/inbox/events`, { headers: { ...maria, accept: 'text/event-stream' }, signal: controller.signal })
      assert.equal(res.status, 200)
      const parser = createParser({ onEvent: (e) => events.push({ event: e.event ?? 'message', data: JSON.parse(e.data) }) })
      const reading = (async () => {
        const decoder = new TextDecoder()
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }))
      })().catch(() => {})
      try {
        // Created after the feed connected (and after its first read of the workspace's streams).
        await new Promise((resolve) => setImmediate(resolve))
        const { streamId } = await waitingStream(app, 'fresh', ['maria'])
        const [started] = (await send(app, 'POST', `/api/streams/${streamId}/triggers/fresh`, {})).json().runs
        const run = await runIn(app, started.id, 'waiting')
        await waitFor(() => events.find((e) => e.event === 'inbox.added' && e.data.runId === run.id), 5000, 'inbox.added for the new stream\'s item')
        await send(app, 'POST', `/api/runs/${run.id}/phases/${run.phases[0].id}/decision`, { decision: 'approve' }, maria)
        await waitFor(() => events.find((e) => e.event === 'inbox.removed' && e.data.runId === run.id), 5000, 'inbox.removed')
        // A stream of another workspace is looked up and left alone.
        const other = await keyFor(app, 'olga', 'admin', 'elsewhere')
        const foreign = (await send(app, 'POST', '/api/streams', { name: 'foreign' }, other)).json()
        await send(app, 'POST', `/api/chat/streams/${foreign.id}/messages`, { content: { blocks: [{ type: 'rich_text', elements: [] }] } }, other)
      } finally {
        controller.abort()
        await reading
      }
    })
  })
}
