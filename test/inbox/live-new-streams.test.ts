// The inbox's live feed announces at once the items of streams created after it connected: before, such a stream
// was followed only at the next keep-alive (15 s by default), and an item that appeared and was decided in that
// window was never announced. The keep-alive here is the default; the item must come within 5 s. And it announces
// an item that appeared while a stream's new feed was still finding where the stream's log ends, as an MCP session's
// notification stream announces the inbox's change then.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { waitFor } from '../runs/agent-server.js'
import { runIn } from '../runs/setup.js'
import { keyFor, waitingStream } from '../schedules/setup.js'
import { EventHub } from '../../src/events/hub.js'
import { InboxConnection } from '../../src/inbox/live.js'
import { NotificationStream } from '../../src/mcp-server/notifications.js'
import { INBOX_URI } from '../../src/mcp-server/resources.js'
import { holdingHeadReads } from '../events/feed-db.js'
import { openInboxFeed } from './feed-client.js'

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
      const feed = await openInboxFeed(`${base}/api/me/inbox/events`, maria)
      const { events } = feed
      assert.equal(feed.res.status, 200)
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
        await feed.close()
      }
    })

    // A feed the connection starts reads its stream's head after the connection's first read of the inbox: an item
    // that appears in between is announced when the feed says where it starts (here its read of the head is held
    // until the item is there).
    it('announces an item that appears before the stream\'s new feed has read the head', { timeout: 30000 }, async () => {
      const { streamId } = await waitingStream(app, 'early', ['maria'])
      const caller = (await send(app, 'GET', '/api/me', undefined, maria)).json()
      const first = await runIn(app, (await send(app, 'POST', `/api/streams/${streamId}/triggers/early`, {})).json().runs[0].id, 'waiting')
      const held = holdingHeadReads(app.database.db)
      const hub = new EventHub(held.db, app.log)
      await hub.start(dialect === 'postgres' ? app.config.databaseUrl : undefined)
      const server = http.createServer((_request, response) => {
        response.writeHead(200, { 'content-type': 'text/event-stream' })
        new InboxConnection(response, app.database.db, hub, caller, { keepAliveMs: 60_000, maxBufferBytes: 1 << 20, maxLifetimeMs: 60_000 }, app.log)
      })
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      const feed = await openInboxFeed(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`)
      const { events } = feed
      try {
        // The connection's first read of the inbox is done; the feeds of the workspace's streams wait for their heads.
        await waitFor(() => events.find((e) => e.event === 'inbox.added' && e.data.runId === first.id), 5000, 'the first item')
        assert.ok(held.held() >= 1)
        const second = await runIn(app, (await send(app, 'POST', `/api/streams/${streamId}/triggers/early`, {})).json().runs[0].id, 'waiting')
        held.release()
        await waitFor(() => events.find((e) => e.event === 'inbox.added' && e.data.runId === second.id), 5000, 'the item that appeared before the feed started')
      } finally {
        await feed.close()
        await hub.close()
        await new Promise((resolve) => server.close(resolve))
      }
    })

    // The same moment for an MCP session's notification stream: an inbox change in it is announced.
    it('MCP: notifies an inbox change made before the stream\'s new feed has read the head', { timeout: 30000 }, async () => {
      const { streamId } = await waitingStream(app, 'early-mcp', ['maria'])
      const caller = (await send(app, 'GET', '/api/me', undefined, maria)).json()
      const at = new Date().toISOString()
      const sessionId = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c'
      await app.database.db.insertInto('mcp_sessions').values({
        id: sessionId, workspace_id: caller.workspaceId, principal_id: caller.principalId, key_hash: 'test', protocol_version: '2025-06-18',
        subscriptions: JSON.stringify([INBOX_URI]), created_at: at, last_used_at: at,
      }).execute()
      const held = holdingHeadReads(app.database.db)
      const hub = new EventHub(held.db, app.log)
      await hub.start(dialect === 'postgres' ? app.config.databaseUrl : undefined)
      const server = http.createServer((_request, response) => {
        response.writeHead(200, { 'content-type': 'text/event-stream' }).flushHeaders()
        new NotificationStream(response, app.database.db, hub, sessionId, caller, { keepAliveMs: 60_000, maxBufferBytes: 1 << 20, maxLifetimeMs: 60_000 }, app.log)
      })
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      const feed = await openInboxFeed(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`)
      try {
        // The stream has read the inbox and followed the workspace's streams, whose feeds wait for their heads.
        await waitFor(() => held.held() >= 1, 5000, 'the feeds to read their heads')
        await runIn(app, (await send(app, 'POST', `/api/streams/${streamId}/triggers/early-mcp`, {})).json().runs[0].id, 'waiting')
        assert.equal(feed.events.length, 0)
        held.release()
        const updated = await waitFor(() => feed.events.find((e) => e.data.method === 'notifications/resources/updated'), 5000, 'the inbox notification')
        assert.equal(updated.data.params.uri, INBOX_URI)
      } finally {
        await feed.close()
        await hub.close()
        await new Promise((resolve) => server.close(resolve))
      }
    })
  })
}
